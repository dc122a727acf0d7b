"""ONNX export: one float32 input [N, F] named ``input``, one output ``scores``.

LightGBM goes through onnxmltools, the linear Pipeline and the forests through skl2onnx (standardisation and
one-hot inside the graph), CatBoost through its own exporter, all without ZipMap. The converter's label output
is pruned, the chosen calibration is appended as plain ONNX ops, and the result must pass onnx.checker and match
the Python model on the test rows (PARITY_TOL, absolute, on probabilities) before anything is published.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, compose, helper, numpy_helper, version_converter  # noqa: F401 (onnx.compose)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from . import calibration as C
from .models import FOREST_MISSING, FORESTS, MissingFlags

INPUT = "input"
OUTPUT = "scores"
OPSET = 17
PARITY_TOL = 1e-5


class ParityError(RuntimeError):
    """The exported graph does not reproduce the Python model."""


def _catboost(est, n_features: int, problem: str) -> tuple[onnx.ModelProto, str]:
    """CatBoost's own exporter (a tree ensemble with float32 borders and BRANCH_GT, as CatBoost compares), with
    its input renamed, its ZipMap dropped (the classifier's tensor output kept) and the default domain declared."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "catboost.onnx")
        est.save_model(path, format="onnx")
        m = onnx.load(path)
    src_input = m.graph.input[0].name
    del m.graph.input[:]
    m.graph.input.append(helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [None, n_features]))
    (tree,) = [n for n in m.graph.node if n.op_type.startswith("TreeEnsemble")]
    tree.input[:] = [INPUT if i == src_input else i for i in tree.input]
    source = "variable" if problem == "regression" else "probabilities"
    # Classifier outputs (label, probability tensor); regressor one output (values, [N, 1]).
    tree.output[-1] = source
    del m.graph.node[:]
    m.graph.node.append(tree)
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(source, TensorProto.FLOAT, None))
    m.opset_import.append(helper.make_opsetid("", OPSET))
    m.ir_version = 8  # the IR version of opset 17; the exporter writes 3
    return m, source


def _flags_shape(operator) -> None:
    from skl2onnx.common.data_types import FloatTensorType

    x = operator.inputs[0]
    operator.outputs[0].type = FloatTensorType([x.get_first_dimension(), x.get_second_dimension()])


def _flags_convert(scope, operator, container) -> None:
    """models.MissingFlags as IsNaN then Cast to float."""
    isnan = scope.get_unique_variable_name("isnan")
    container.add_node("IsNaN", operator.inputs[0].full_name, isnan, name=scope.get_unique_operator_name("IsNaN"))
    container.add_node(
        "Cast", isnan, operator.outputs[0].full_name, to=TensorProto.FLOAT, name=scope.get_unique_operator_name("Cast")
    )


@functools.cache
def _register_flags() -> None:
    """Once per process, on the first skl2onnx export (skl2onnx is imported only when a graph is built)."""
    from skl2onnx import update_registered_converter

    update_registered_converter(MissingFlags, "BuilderMissingFlags", _flags_shape, _flags_convert)


def _convert(est, config: dict, n_features: int, problem: str) -> tuple[onnx.ModelProto, str]:
    if config["model"] == "catboost":
        return _catboost(est, n_features, problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config["model"] == "lightgbm":
            from onnxmltools import convert_lightgbm
            from onnxmltools.convert.common.data_types import FloatTensorType

            kwargs = {} if problem == "regression" else {"zipmap": False}
            # onnxmltools writes opset 15 at most; the version converter lifts the default domain to OPSET.
            m = convert_lightgbm(
                est, initial_types=[(INPUT, FloatTensorType([None, n_features]))], target_opset=15, **kwargs
            )
            m = version_converter.convert_version(m, OPSET)
        else:
            from skl2onnx import convert_sklearn
            from skl2onnx.common.data_types import FloatTensorType

            _register_flags()

            options = {} if problem == "regression" else {id(est): {"zipmap": False}}
            # Binary logistic regression: the converter gives p0 as 1 - p1 in float32, which loses the small
            # probabilities of confident rows (relative error of percents below 1e-6, enough to break parity
            # once calibrated). Its raw scores [-z, z] through one sigmoid give both columns at full precision.
            raw_linear = (
                problem == "binary" and isinstance(est, Pipeline) and isinstance(est.steps[-1][1], LogisticRegression)
            )
            if raw_linear:
                options[id(est.steps[-1][1])] = {"raw_scores": True}
            m = convert_sklearn(
                est,
                initial_types=[(INPUT, FloatTensorType([None, n_features]))],
                options=options,
                target_opset={"": OPSET, "ai.onnx.ml": 3},
            )
            if raw_linear:
                for out in m.graph.output:
                    if out.name == "probabilities":
                        out.name = "raw_scores"
                for node in m.graph.node:
                    node.output[:] = ["raw_scores" if o == "probabilities" else o for o in node.output]
                nodes, inits = _sigmoid("raw_scores", "probabilities", "linear_sig")
                m.graph.node.extend(nodes)
                m.graph.initializer.extend(inits)
                for out in m.graph.output:
                    if out.name == "raw_scores":
                        out.name = "probabilities"
        if config["model"] in FORESTS:
            _forest_missing(m)
    names = [o.name for o in m.graph.output]
    source = "variable" if problem == "regression" else "probabilities"
    if source not in names:
        raise RuntimeError(f"converter outputs {names} lack {source!r}")
    return m, source


def _forest_missing(m: onnx.ModelProto) -> None:
    """Puts an Imputer in front of a forest's graph: NaN -> FOREST_MISSING, as models.forest_input does in Python."""
    for node in m.graph.node:
        node.input[:] = ["forest_input" if name == INPUT else name for name in node.input]
    imputer = helper.make_node(
        "Imputer",
        [INPUT],
        ["forest_input"],
        domain="ai.onnx.ml",
        name="forest_missing",
        imputed_value_floats=[FOREST_MISSING],
        replaced_value_float=float("nan"),
    )
    m.graph.node.insert(0, imputer)


def _const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


def _sigmoid(src: str, dst: str, prefix: str) -> tuple[list, list]:
    """1 / (1 + exp(-x)) from plain ops. onnxruntime's Sigmoid kernel is an approximation whose relative error
    reaches percents in the tails (measured 3.6% at x = -13.3), which calibrated small probabilities inherit."""
    nodes = [
        helper.make_node("Neg", [src], [f"{prefix}_neg"]),
        helper.make_node("Exp", [f"{prefix}_neg"], [f"{prefix}_exp"]),
        helper.make_node("Add", [f"{prefix}_exp", f"{prefix}_one"], [f"{prefix}_den"]),
        helper.make_node("Reciprocal", [f"{prefix}_den"], [dst]),
    ]
    return nodes, [_const(f"{prefix}_one", 1.0)]


def _calibration_nodes(cal: dict | None, src: str) -> tuple[list, list]:
    """Nodes and initializers turning probabilities ``src`` into ``scores``."""
    if not cal:
        return [helper.make_node("Identity", [src], [OUTPUT], name="scores_identity")], []
    if cal["method"] == "platt":
        sig_nodes, sig_inits = _sigmoid("cal_z", "cal_s1", "cal_sig")
        # logit(p1) as log(p1) - log(p0), each column clipped: 1 - p1 in float32 would lose p0 when it is tiny.
        inits = [
            _const("cal_one", 1.0),
            _const("cal_lo", C.EPS),
            _const("cal_hi", 1 - C.EPS),
            _const("cal_a", cal["a"]),
            _const("cal_b", cal["b"]),
            numpy_helper.from_array(np.array([1], np.int64), "cal_start"),
            numpy_helper.from_array(np.array([2], np.int64), "cal_end"),
            numpy_helper.from_array(np.array([1], np.int64), "cal_axis"),
            numpy_helper.from_array(np.array([0], np.int64), "cal_start0"),
            *sig_inits,
        ]
        nodes = [
            helper.make_node("Slice", [src, "cal_start", "cal_end", "cal_axis"], ["cal_p1"]),
            helper.make_node("Slice", [src, "cal_start0", "cal_start", "cal_axis"], ["cal_p0"]),
            helper.make_node("Clip", ["cal_p1", "cal_lo", "cal_hi"], ["cal_pc"]),
            helper.make_node("Log", ["cal_pc"], ["cal_logp"]),
            helper.make_node("Clip", ["cal_p0", "cal_lo", "cal_hi"], ["cal_q"]),
            helper.make_node("Log", ["cal_q"], ["cal_logq"]),
            helper.make_node("Sub", ["cal_logp", "cal_logq"], ["cal_logit"]),
            helper.make_node("Mul", ["cal_logit", "cal_a"], ["cal_za"]),
            helper.make_node("Add", ["cal_za", "cal_b"], ["cal_z"]),
            *sig_nodes,
            helper.make_node("Sub", ["cal_one", "cal_s1"], ["cal_s0"]),
            helper.make_node("Concat", ["cal_s0", "cal_s1"], [OUTPUT], axis=1),
        ]
        return nodes, inits
    inits = [_const("cal_lo", C.EPS), _const("cal_hi", 1.0), _const("cal_t", cal["temperature"])]
    nodes = [
        helper.make_node("Clip", [src, "cal_lo", "cal_hi"], ["cal_pc"]),
        helper.make_node("Log", ["cal_pc"], ["cal_logp"]),
        helper.make_node("Div", ["cal_logp", "cal_t"], ["cal_z"]),
        helper.make_node("Softmax", ["cal_z"], [OUTPUT], axis=1),
    ]
    return nodes, inits


def _prune(graph: onnx.GraphProto) -> None:
    """Drops nodes that no graph output depends on (the converter's label branch)."""
    needed = {o.name for o in graph.output}
    keep = []
    for node in reversed(list(graph.node)):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    keep.reverse()
    del graph.node[:]
    graph.node.extend(keep)
    used = needed
    inits = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(inits)


def _blend(est, config: dict, n_features: int, problem: str) -> tuple[onnx.ModelProto, str]:
    """One graph holding every part (names prefixed, the input shared) and their weighted sum."""
    merged, nodes, inits, opsets = None, [], [], {}
    for i, (part, cfg, w) in enumerate(zip(est.parts, config["parts"], est.weights)):
        m, source = _convert(part, cfg, n_features, problem)
        m.graph.ClearField("output")
        m.graph.output.append(helper.make_tensor_value_info(source, TensorProto.FLOAT, None))
        _prune(m.graph)
        m = onnx.compose.add_prefix(m, f"p{i}_")
        for node in m.graph.node:
            for j, name in enumerate(node.input):
                if name == f"p{i}_{INPUT}":
                    node.input[j] = INPUT
        nodes += list(m.graph.node)
        inits += list(m.graph.initializer) + [_const(f"blend_w{i}", w)]
        nodes.append(helper.make_node("Mul", [f"p{i}_{source}", f"blend_w{i}"], [f"blend_t{i}"]))
        for op in m.opset_import:
            opsets[op.domain] = max(opsets.get(op.domain, 0), op.version)
        merged = merged or m
    nodes.append(helper.make_node("Sum", [f"blend_t{i}" for i in range(len(est.parts))], ["blend_scores"]))
    graph = helper.make_graph(
        nodes, "blend", [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [None, n_features])], [], inits
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()], producer_name="builder_pipelines"
    )
    model.ir_version = merged.ir_version
    return model, "blend_scores"


def build_onnx(est, config: dict, problem: str, n_features: int, n_outputs: int, cal: dict | None) -> onnx.ModelProto:
    if config["model"] == "blend":
        m, source = _blend(est, config, n_features, problem)
    else:
        m, source = _convert(est, config, n_features, problem)
    nodes, inits = _calibration_nodes(cal if problem != "regression" else None, source)
    m.graph.node.extend(nodes)
    m.graph.initializer.extend(inits)
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [None, n_outputs]))
    _prune(m.graph)
    m.doc_string = "Builder tabular model: input float32 [N, F] in manifest input.columns order; output scores."
    onnx.checker.check_model(m, full_check=True)
    return m


def run_onnx(model_bytes: bytes, X: np.ndarray) -> np.ndarray:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
    (out,) = sess.run([OUTPUT], {INPUT: np.asarray(X, dtype=np.float32)})
    return np.asarray(out, dtype=np.float64)


def check_parity(
    model: onnx.ModelProto, X: np.ndarray, reference: np.ndarray, problem: str
) -> tuple[np.ndarray, float]:
    """Runs the graph on X; raises ParityError past the tolerance. Returns (onnx scores, max abs diff)."""
    got = run_onnx(model.SerializeToString(), X)
    if got.shape != reference.shape:
        raise ParityError(f"ONNX output shape {got.shape} differs from the model's {reference.shape}")
    diff = float(np.abs(got - reference).max()) if len(got) else 0.0
    # Regression values are float32 in the graph: the tolerance scales with their magnitude.
    tol = PARITY_TOL * (max(1.0, float(np.abs(reference).max())) if problem == "regression" else 1.0)
    if not diff <= tol:
        raise ParityError(f"ONNX output differs from the Python model by {diff:.3g} (tolerance {tol:.3g})")
    return got, diff
