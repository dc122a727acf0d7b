"""Renders the Kubernetes manifests (deploy/kubernetes) and checks them offline; `make test-deploy` runs it.

    .venv-dev/bin/python scripts/validate-kubernetes.py [--self-test]

For the base and each overlay, `kubectl kustomize` renders the objects a `kubectl apply -k` would send, then:
- every built-in object is validated against the Kubernetes API's JSON schema of the oldest and the newest release
  we claim (kubernetes-validate, strict: an unknown or misspelt field is an error, as the API server would reject);
- KEDA's objects (custom resources: no schema for them ships with Kubernetes) against KEDA_SCHEMAS below, a
  structural schema of the fields used here, written after KEDA 2.12+'s ScaledObject and TriggerAuthentication
  CRDs (field names and types, strings where KEDA wants strings); not KEDA's own CRD schema, which is not bundled;
- the references between objects, which no schema sees: selectors, scale targets, Secrets and ConfigMaps, probe
  ports, $(VAR) in env values, the Redis lists KEDA reads against BULLMQ_QUEUE, GPU requests.
--self-test breaks a rendered copy in known ways and checks that each break is reported (so the checks can fail).
Nothing here talks to a cluster: these manifests have not been run on one.
"""

import copy
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes"
TARGETS = ["base", "overlays/example"]
# Oldest release we claim (autoscaling/v2, policy/v1, Job TTL and sidecar-free probes are all GA by then) and the
# newest whose schemas kubernetes-validate bundles.
K8S_VERSIONS = ["1.29", "1.37"]
# Objects the base expects the installer to create (overlays/example generates the first two).
EXTERNAL_IN_BASE = {("Secret", "builder-secrets"), ("Secret", "builder-redis")}

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_METADATA = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
_SCALING_POLICY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["type", "value", "periodSeconds"],
    "properties": {
        "type": {"enum": ["Pods", "Percent"]},
        "value": {"type": "integer", "minimum": 1},
        "periodSeconds": {"type": "integer", "minimum": 1, "maximum": 1800},
    },
}
_SCALING_RULES = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "stabilizationWindowSeconds": {"type": "integer", "minimum": 0, "maximum": 3600},
        "selectPolicy": {"enum": ["Max", "Min", "Disabled"]},
        "policies": {"type": "array", "items": _SCALING_POLICY},
    },
}
KEDA_SCHEMAS = {
    "ScaledObject": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "keda.sh/v1alpha1"},
            "metadata": _METADATA,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "required": ["scaleTargetRef", "triggers"],
                "properties": {
                    "scaleTargetRef": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["name"],
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "name": {"type": "string"},
                            "envSourceContainerName": {"type": "string"},
                        },
                    },
                    "pollingInterval": {"type": "integer", "minimum": 1},
                    "cooldownPeriod": {"type": "integer", "minimum": 0},
                    "initialCooldownPeriod": {"type": "integer", "minimum": 0},
                    "idleReplicaCount": {"type": "integer", "minimum": 0},
                    "minReplicaCount": {"type": "integer", "minimum": 0},
                    "maxReplicaCount": {"type": "integer", "minimum": 1},
                    "advanced": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "restoreToOriginalReplicaCount": {"type": "boolean"},
                            "horizontalPodAutoscalerConfig": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "name": {"type": "string"},
                                    "behavior": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "properties": {"scaleUp": _SCALING_RULES, "scaleDown": _SCALING_RULES},
                                    },
                                },
                            },
                            "scalingModifiers": {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["formula", "target"],
                                "properties": {
                                    "formula": {"type": "string"},
                                    "target": {"type": "string"},
                                    "activationTarget": {"type": "string"},
                                    "metricType": {"enum": ["AverageValue", "Value"]},
                                },
                            },
                        },
                    },
                    "triggers": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["type", "metadata"],
                            "properties": {
                                "type": {"type": "string"},
                                "name": {"type": "string"},
                                "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                                "useCachedMetrics": {"type": "boolean"},
                                "metadata": _STRING_MAP,
                                "authenticationRef": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["name"],
                                    "properties": {
                                        "name": {"type": "string"},
                                        "kind": {"enum": ["TriggerAuthentication", "ClusterTriggerAuthentication"]},
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
    "TriggerAuthentication": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "keda.sh/v1alpha1"},
            "metadata": _METADATA,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "secretTargetRef": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["parameter", "name", "key"],
                            "properties": {
                                "parameter": {"type": "string"},
                                "name": {"type": "string"},
                                "key": {"type": "string"},
                            },
                        },
                    },
                    "env": {"type": "array"},
                },
            },
        },
    },
}
# A resource quantity as the API server parses it (the JSON schema only says "integer or string").
QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$")
# What KEDA's Redis scaler can take from a TriggerAuthentication instead of its metadata.
REDIS_AUTH_PARAMETERS = {"address", "host", "port", "username", "password", "addresses", "hosts", "ports"}


def render(target: str) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if not kubectl:
        sys.exit(
            "validate-kubernetes: kubectl is needed to render the Kustomize manifests (kubectl kustomize);"
            " install kubectl 1.21 or later"
        )
    out = subprocess.run([kubectl, "kustomize", str(ROOT / target)], check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def name_of(doc: dict) -> str:
    return f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"


def schema_problems(docs: list[dict]) -> list[str]:
    problems = []
    for doc in docs:
        kind = doc.get("kind")
        if kind in KEDA_SCHEMAS:
            validator = jsonschema.Draft202012Validator(KEDA_SCHEMAS[kind])
            for err in validator.iter_errors(doc):
                where = ".".join(str(p) for p in err.absolute_path)
                problems.append(f"{name_of(doc)}: {where}: {err.message} (KEDA structural schema)")
            continue
        for version in K8S_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as err:
                where = ".".join(str(p) for p in err.absolute_path)
                problems.append(f"{name_of(doc)}: {where}: {err.message} (Kubernetes {version} schema)")
            except kubernetes_validate.SchemaNotFoundError as err:
                problems.append(f"{name_of(doc)}: {err.message}")
    return problems


def pod_specs(docs: list[dict]) -> list[tuple[dict, dict]]:
    return [(d, d["spec"]["template"]) for d in docs if d.get("kind") in ("Deployment", "Job")]


def reference_problems(docs: list[dict], external: set[tuple[str, str]]) -> list[str]:
    problems: list[str] = []
    have = {(d["kind"], d["metadata"]["name"]) for d in docs} | external
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    config = next((d.get("data", {}) for d in docs if name_of(d) == "ConfigMap/builder-config"), {})

    for owner, template in pod_specs(docs):
        labels = template.get("metadata", {}).get("labels", {})
        if owner["kind"] == "Deployment":
            selector = owner["spec"]["selector"].get("matchLabels", {})
            if not selector.items() <= labels.items():
                problems.append(f"{name_of(owner)}: its selector {selector} does not select its own pods {labels}")
        spec = template["spec"]
        for volume in spec.get("volumes", []):
            for key, kind, field in (("secret", "Secret", "secretName"), ("configMap", "ConfigMap", "name")):
                ref = volume.get(key)
                if ref and not ref.get("optional") and (kind, ref[field]) not in have:
                    problems.append(f"{name_of(owner)}: volume {volume['name']} names the missing {kind} {ref[field]}")
        for container in spec["containers"]:
            where = f"{name_of(owner)} container {container['name']}"
            for source in container.get("envFrom", []):
                for key, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                    ref = source.get(key)
                    if ref and not ref.get("optional") and (kind, ref["name"]) not in have:
                        problems.append(f"{where}: envFrom names the missing {kind} {ref['name']}")
            defined: set[str] = set()
            for var in container.get("env", []):
                for used in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", str(var.get("value", ""))):
                    if used not in defined:
                        problems.append(f"{where}: env {var['name']} uses $({used}), not defined before it")
                defined.add(var["name"])
            ports = {p.get("name") for p in container.get("ports", [])} | {
                p["containerPort"] for p in container.get("ports", [])
            }
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                action = container.get(probe, {})
                port = (action.get("httpGet") or action.get("tcpSocket") or {}).get("port")
                if port is not None and port not in ports:
                    problems.append(f"{where}: {probe} uses port {port}, which the container does not declare")
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                for resource, amount in resources.get(bound, {}).items():
                    if not QUANTITY.match(str(amount)):
                        problems.append(
                            f"{where}: {bound}.{resource} {amount!r} is not a Kubernetes quantity (2, 500m, 4Gi)"
                        )
            gpu_request = resources.get("requests", {}).get("nvidia.com/gpu")
            gpu_limit = resources.get("limits", {}).get("nvidia.com/gpu")
            if (gpu_request or gpu_limit) and str(gpu_request or gpu_limit) != str(gpu_limit):
                problems.append(f"{where}: nvidia.com/gpu must be a limit (and a request equal to it)")
            if owner["metadata"]["name"].endswith("-gpu") and not gpu_limit:
                problems.append(f"{where}: a GPU worker without an nvidia.com/gpu limit would get no GPU")

    for service in (d for d in docs if d["kind"] == "Service"):
        selector = service["spec"].get("selector", {})
        if not any(selector.items() <= t.get("metadata", {}).get("labels", {}).items() for _, t in pod_specs(docs)):
            problems.append(f"{name_of(service)}: its selector {selector} selects no pod")

    scaled: dict[str, str] = {}
    for scaler in (d for d in docs if d["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")):
        target = scaler["spec"]["scaleTargetRef"]
        if target.get("kind", "Deployment") != "Deployment" or target["name"] not in deployments:
            problems.append(
                f"{name_of(scaler)}: scales {target.get('kind', 'Deployment')}/{target['name']}, which is not here"
            )
        elif target["name"] in scaled:
            problems.append(
                f"{name_of(scaler)}: Deployment/{target['name']} is already scaled by {scaled[target['name']]}"
            )
        scaled.setdefault(target["name"], name_of(scaler))

    for scaler in (d for d in docs if d["kind"] == "ScaledObject"):
        spec = scaler["spec"]
        triggers = spec["triggers"]
        formula = spec.get("advanced", {}).get("scalingModifiers", {}).get("formula")
        if formula:
            names = {t.get("name") for t in triggers}
            for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", formula)) - {"max", "min", "abs", "ceil", "floor"}:
                if word not in names:
                    problems.append(f"{name_of(scaler)}: the formula names {word}, which is no trigger's name")
        need = "gpu" if spec["scaleTargetRef"]["name"].endswith("-gpu") else "cpu"
        queue = config.get("BULLMQ_QUEUE")
        for trigger in triggers:
            auth = trigger.get("authenticationRef", {}).get("name")
            if auth and ("TriggerAuthentication", auth) not in have:
                problems.append(f"{name_of(scaler)}: names the missing TriggerAuthentication {auth}")
            if trigger["type"] != "redis":
                continue
            metadata = trigger["metadata"]
            if "listName" not in metadata:
                problems.append(f"{name_of(scaler)}: redis trigger {trigger.get('name')} has no listName")
            elif queue and metadata["listName"] not in (f"bull:{queue}-{need}:wait", f"bull:{queue}-{need}:active"):
                problems.append(
                    f"{name_of(scaler)}: reads {metadata['listName']}, not a list of the {need} queue of"
                    f" BULLMQ_QUEUE={queue} (bull:{queue}-{need}:wait or :active)"
                )
            if not auth and not {"address", "host", "addressFromEnv", "hostFromEnv"} & metadata.keys():
                problems.append(f"{name_of(scaler)}: redis trigger {trigger.get('name')} has no Redis address")

    for auth in (d for d in docs if d["kind"] == "TriggerAuthentication"):
        for ref in auth["spec"].get("secretTargetRef", []):
            if ("Secret", ref["name"]) not in have:
                problems.append(f"{name_of(auth)}: names the missing Secret {ref['name']}")
            if ref["parameter"] not in REDIS_AUTH_PARAMETERS:
                problems.append(f"{name_of(auth)}: {ref['parameter']} is not a parameter KEDA's Redis scaler takes")

    namespaces = [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"]
    if namespaces:
        for doc in docs:
            if doc["kind"] != "Namespace" and doc["metadata"].get("namespace") not in namespaces:
                problems.append(f"{name_of(doc)}: not in the namespace {namespaces[0]}")
    return problems


def check(docs: list[dict], target: str) -> list[str]:
    external = EXTERNAL_IN_BASE if target == "base" else set()
    return schema_problems(docs) + reference_problems(docs, external)


def find(docs: list[dict], name: str) -> dict:
    return next(d for d in docs if name_of(d) == name)


def container(docs: list[dict], name: str) -> dict:
    return find(docs, name)["spec"]["template"]["spec"]["containers"][0]


# Each break must be reported; (what it breaks, how). They run on the rendered example overlay.
BREAKS: list[tuple[str, Callable[[list[dict]], None]]] = [
    ("replicas as a string", lambda d: find(d, "Deployment/builder-api")["spec"].update(replicas="two")),
    ("a misspelt container field", lambda d: container(d, "Deployment/builder-api").update(envFrm=[])),
    (
        "a memory limit that is not a quantity",
        lambda d: container(d, "Deployment/builder-worker")["resources"]["limits"].update(memory="8 gigs"),
    ),
    (
        "a number in a KEDA trigger's metadata",
        lambda d: find(d, "ScaledObject/builder-worker")["spec"]["triggers"][0]["metadata"].update(listLength=1),
    ),
    (
        "a ScaledObject on a missing Deployment",
        lambda d: find(d, "ScaledObject/builder-worker")["spec"]["scaleTargetRef"].update(name="builder-workers"),
    ),
    (
        "a Deployment scaled by an HPA and KEDA",
        lambda d: find(d, "HorizontalPodAutoscaler/builder-api")["spec"]["scaleTargetRef"].update(
            name="builder-worker"
        ),
    ),
    (
        "KEDA reading another queue's list",
        lambda d: find(d, "ScaledObject/builder-worker-gpu")["spec"]["triggers"][0]["metadata"].update(
            listName="bull:builder-experiments-cpu:wait"
        ),
    ),
    (
        "BULLMQ_QUEUE changed without the ScaledObjects",
        lambda d: find(d, "ConfigMap/builder-config")["data"].update(BULLMQ_QUEUE="jobs"),
    ),
    (
        "a formula naming no trigger",
        lambda d: find(d, "ScaledObject/builder-worker")["spec"]["advanced"]["scalingModifiers"].update(
            formula="waiting + runing"
        ),
    ),
    (
        "a Service selecting no pod",
        lambda d: find(d, "Service/builder-api")["spec"]["selector"].update(component="api"),
    ),
    (
        "envFrom a missing Secret",
        lambda d: container(d, "Deployment/builder-api")["envFrom"][1]["secretRef"].update(name="builder-secret"),
    ),
    (
        "a probe on an undeclared port",
        lambda d: container(d, "Deployment/builder-worker")["readinessProbe"]["httpGet"].update(port="http"),
    ),
    (
        "a GPU worker without a GPU",
        lambda d: container(d, "Deployment/builder-worker-gpu")["resources"]["limits"].pop("nvidia.com/gpu"),
    ),
    (
        "$(VAR) before VAR is defined",
        lambda d: container(d, "Deployment/builder-proxy")["env"].sort(
            key=lambda v: v["name"] != "BUILDER_API_UPSTREAM"
        ),
    ),
    (
        "a selector that misses its own pods",
        lambda d: find(d, "Deployment/builder-proxy")["spec"]["selector"]["matchLabels"].update(tier="x"),
    ),
]


def self_test() -> int:
    rendered = render("overlays/example")
    clean = check(rendered, "overlays/example")
    if clean:
        print("self-test: the example overlay itself has problems:\n  " + "\n  ".join(clean))
        return 1
    missed = []
    for what, breaking in BREAKS:
        broken = copy.deepcopy(rendered)
        breaking(broken)
        found = check(broken, "overlays/example")
        print(f"  {'caught' if found else 'MISSED'}: {what}" + (f" -> {found[0]}" if found else ""))
        if not found:
            missed.append(what)
    print(f"self-test: {len(BREAKS) - len(missed)} of {len(BREAKS)} breaks reported")
    return 1 if missed else 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    failed = False
    for target in TARGETS:
        docs = render(target)
        problems = check(docs, target)
        keda = sum(1 for d in docs if d["kind"] in KEDA_SCHEMAS)
        if problems:
            failed = True
            print(f"deploy/kubernetes/{target}: {len(problems)} problem(s)\n  " + "\n  ".join(problems))
        else:
            print(
                f"deploy/kubernetes/{target}: {len(docs) - keda} objects valid against the Kubernetes"
                f" {' and '.join(K8S_VERSIONS)} schemas (strict), {keda} KEDA objects against the structural schema,"
                " references consistent"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
