"""Markers for the pipeline tests. `make test-unit` runs `-m "not train"`, the fast tier; `make test` runs them all."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "train: runs the pipeline's train or evaluate step, a training trial or a budgeted search (slow, left out of make test-unit)",
    )
