# The copied programs are run by tests/test_programs.py through _shim.py, not collected by pytest.
collect_ignore_glob = ["*"]
