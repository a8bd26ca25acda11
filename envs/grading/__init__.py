"""Grading a task attempt so that only a fix earns reward, the same way on every surface (Harbor's verifier,
swebench's eval script, the runtime's reward, verl's run_tests):

    policy.py   THE grading record a task carries (Grading): what belongs to the task, how its tests run
    image.py    the task's start image: the environment with the bug, a pristine copy of the start state,
                the test user, and the grader with its policy (one Dockerfile for every surface)
    kit/        the grader itself, stdlib only, run as root inside a container the agent never touched
"""
