"""The grader's entry point in an image (copied as /opt/autoinstall/grader/grade.py beside the package
`autoinstall_grader`); run as `python3 -I -S grade.py ...`, so neither the environment, the working directory
nor any site-packages reaches the grader's imports."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autoinstall_grader.grade import main  # noqa: E402

sys.exit(main())
