"""Tasks from a verified environment: bugs from its history and from tree-sitter mutations, kept when
1..K tests fail, validated twice both ways in fresh containers, written to the task store.

Modules: languages.py (grammar tables), mutation.py (operators), history.py (reversed commits),
candidate.py (a bug before it is run), workspace.py (the container side), validate.py (search and
validation), combine.py (combined tasks), searching.py (the search loop), codeindex.py (functions, test
ids and call distances by tree-sitter), difficulty.py (features and bucket), statement.py (the tests style),
symptoms.py + prose.py (issue and terse by templates), statement_model.py (by a chat model), leaks.py (the
leak check), statements.py (every style, checked), build.py (the Task record), settings.py (options and
report), store.py (the JSONL store), make.py (`make_tasks`).
"""
from autoinstall.tasks.make import MakeOptions, MakeReport, TaskError, make_tasks
from autoinstall.tasks.store import TaskStore, TaskStoreError

__all__ = ["MakeOptions", "MakeReport", "TaskError", "TaskStore", "TaskStoreError", "make_tasks"]
