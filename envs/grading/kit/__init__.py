"""The grader's kit: stdlib only, Python >= 3.9, relative imports only.

It is imported on the host as `envs.grading.kit` (the runners' parsers, the change policy) and shipped into every
task image as the package `autoinstall_grader` (envs/grading/image.py), where `python3 -I -S grade.py` runs it
as root: it takes the agent's change to product code, runs the task's tests as an unprivileged user and scores
them. Nothing here may import a third-party module or anything outside this folder.
"""
