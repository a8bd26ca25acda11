"""Environment: the runtime an RL trainer or an agent calls; one container, back to the image's state each reset.

    spec = RuntimeSpec.from_spec_file("envs/foo/spec.json")
    with Environment(spec, profile="anthropic") as env:
        info = env.reset()                       # the image's state (in place after the first) + tool server
        obs = env.step("bash", {"command": "ls"})
        reward = env.reward()                    # pass fraction of the verification tests

Each Environment owns its container and tool session, so many run at once from threads (calls on one
instance are thread-safe) or from asyncio (`areset`, `astep`, `areward`, `aclose`).
"""

from envs.runtime.environment import Environment, EnvironmentStateError, Observation
from envs.runtime.reward import Reward, TestOutcome, score, selects
from envs.runtime.spec import RuntimeSpec

__all__ = [
    "Environment",
    "EnvironmentStateError",
    "Observation",
    "Reward",
    "RuntimeSpec",
    "TestOutcome",
    "score",
    "selects",
]
