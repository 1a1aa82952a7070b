"""Entry deployment of the test app: one replica that queues up to 30 requests
and passes each to the runtime."""
from pathlib import Path

import bioengine
from runtime import RuntimeDeployment


def _requirements(name):
    return (Path(__file__).parent / name).read_text().split()


@bioengine.app(
    num_cpus=1,
    memory_mb=4 * 1024,
    pip=_requirements("requirements-entry.txt"),
    max_queued_requests=30,
    autoscaling_config={
        "min_replicas": 1,
        "initial_replicas": 1,
        "max_replicas": 1,
    },
)
class EntryDeployment:
    def __init__(self, runtime: RuntimeDeployment, cache_size_in_gb: float = 50.0) -> None:
        self.runtime = runtime

    @bioengine.method
    async def infer(self, image):
        return await self.runtime.predict(image)
