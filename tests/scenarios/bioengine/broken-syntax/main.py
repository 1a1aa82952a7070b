import bioengine


@bioengine.app(num_cpus=1
class Main:
    pass
