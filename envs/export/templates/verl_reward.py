"""The reward of an autoinstall task for verl (shipped by `autoinstall export --format verl --tasks`).

Point verl at it: reward.custom_reward_function.path=<this file> reward.custom_reward_function.name=compute_score.
verl's ToolAgentLoop records each tool call's step reward in `tool_rewards`, which its reward managers pass here
in `extra_info`; only the `run_tests` tool returns one (1.0 when every FAIL_TO_PASS and PASS_TO_PASS test of the
task passes in the trajectory's container, else 0.0; the other tools return none). The score is the result of
the last run_tests call, 0.0 when the model never ran the tests. Stdlib only.
"""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    rewards = [r for r in ((extra_info or {}).get("tool_rewards") or []) if r is not None]
    score = float(rewards[-1]) if len(rewards) else 0.0
    return {"score": score, "run_tests_calls": len(rewards)}
