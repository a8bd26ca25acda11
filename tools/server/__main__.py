"""`python -m tools.server --root DIR`: serve JSON-line requests on stdin/stdout."""
from .main import main

main()
