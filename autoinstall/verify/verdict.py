"""From a Verification to the spec's status and failure class."""
from __future__ import annotations

from autoinstall.verify.checks import narrow_suite, partial_reasons, run_failure_class
from envs.spec import EnvSpec, Failure, Verification
from envs.testrun import abilities


def judge_spec(spec: EnvSpec, verification: Verification) -> None:
    """Set `spec.status` and `spec.failure` from the verification (no_tests when there was nothing to run)."""
    if not abilities(spec.plan.test_runner).has_tests or verification.last_run is None:
        spec.failure = Failure(failure_class="no_tests", message="installed, but the project has no tests to run",
                               evidence="; ".join(spec.plan.notes))
    elif verification.verified and (narrow := narrow_suite(verification.collection, verification.max_deselected)):
        spec.status = "partial"  # it runs and passes, but a side suite: the build is kept, not thrown away
        spec.failure = Failure(failure_class="narrow_suite", message=f"{narrow} ({verification.reason})",
                               evidence="; ".join(spec.plan.notes[-3:]))
    elif verification.verified and (over := partial_reasons(verification.collection, verification.max_deselected)):
        spec.status = "partial"
        spec.failure = Failure(failure_class="deselection_cap", message="; ".join(over),
                               evidence=f"{len(spec.deselected)} deselection entries; see spec.deselected")
    elif verification.verified:
        spec.status = "verified"
        spec.failure = None
    else:
        last = verification.last_run
        failure_class = run_failure_class(last)
        if failure_class == "tests_timeout":  # verification's own run: the installed suite did pass in time
            failure_class = "verify_timeout"
        spec.failure = Failure(failure_class=failure_class, message=verification.reason,
                               evidence=last.output_tail[-1500:])
