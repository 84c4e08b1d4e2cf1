"""What the tests share: builders of submissions and classes, models of the runner and the
reporter, the command line run as a TA runs it. tests/conftest.py puts tests/ on sys.path, so a
test at any depth imports ``from support.helpers import ...``."""
