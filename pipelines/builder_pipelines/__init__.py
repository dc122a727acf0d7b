"""Builder's training and evaluation pipelines.

Entry point: ``python -m builder_pipelines train|evaluate --spec spec.json --out DIR``.
The contract with the TypeScript service lives in ``pipelines/contract/*.schema.json``.
"""

__version__ = "0.1.0"
