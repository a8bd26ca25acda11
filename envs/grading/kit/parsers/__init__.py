"""Per-test results from what each runner writes (stdlib only): one module per report format.

    junit     JUnit XML (pytest)          gotest    `go test -json` events
    libtest   `cargo test` output         surefire  Maven Surefire XML reports
    node      TAP and spec-like reporters unittest  unittest/testtools verbose lines
    summary   summary lines (pytest's, unittest's `Ran N tests`)
"""
