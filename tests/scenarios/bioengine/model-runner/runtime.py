"""Runtime deployment of the test app: a whole GPU per replica, one to two
replicas."""
import bioengine


@bioengine.app(
    num_cpus=1,
    gpu_memory_mb=-1,
    memory_mb=12288,
    max_ongoing_requests=10,
    autoscaling_config={
        "min_replicas": 1,
        "initial_replicas": 1,
        "max_replicas": 2,
        "target_num_ongoing_requests_per_replica": 3.0,
        "metrics_interval_s": 2.0,
        "look_back_period_s": 10.0,
        "upscale_delay_s": 0.0,
        "downscale_delay_s": 600.0,
    },
)
class RuntimeDeployment:
    def __init__(self) -> None:
        self.model = None

    @bioengine.method
    async def predict(self, image):
        return image
