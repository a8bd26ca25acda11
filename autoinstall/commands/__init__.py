"""The CLI's commands, one module each; cli.py only assembles them into the typer app and runs `main()`.

- `run.py` `autoinstall run REPO` (also `autoinstall REPO`); `plan.py` `autoinstall plan REPO`.
- `batch.py` `autoinstall batch FILE`, drawn by `batch_display.py`; `catalog.py` `autoinstall catalog ...`.
- `debug.py` `autoinstall debug ID`; `export.py` `autoinstall export`.
- `base.py` `autoinstall base build|list`; `sandbox.py` `autoinstall exec CMD` and `autoinstall cleanup`;
  `tools.py` `autoinstall tools schema|call`.
- `app.py` `App`, the typer app every group is made with (a switch's `--help` shows no value type).
- `options.py` the options several commands share, with the configuration models' defaults;
  `output.py` the consoles, tables that fit the terminal or a pipe, the one-line error;
  `progress.py` the live line, the log file of long steps, the plan and the summary.

Heavy imports (git, docker, sqlite) happen inside the commands, so `autoinstall --help` stays fast.
"""
