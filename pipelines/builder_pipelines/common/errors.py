class SpecError(ValueError):
    """The job spec does not satisfy pipelines/contract/job-spec.schema.json."""


class DataError(ValueError):
    """The data cannot be trained on; the message is shown to the user."""
