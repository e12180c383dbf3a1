"""Render and check the files that wire kube-scheduler to the extender.

`check_config(path, version)` recognises the file by its `kind`:

* `KubeSchedulerConfiguration` — the API versions kube-scheduler `version` (default: the newest
  supported) decodes (v1 from 1.25, v1beta3 until 1.28, v1beta2 until 1.27), strict keys
  everywhere, every rule kube-scheduler applies to `extenders` (see `kubesched`), and the plugin
  names of every profile: known when that release has them in tree or the extender's registry
  has them (see `kubeversions`);
* `Policy` — the legacy policy file of clusters older than v1.23 (see `legacypolicy`);
* `ExtenderPolicy` — the extender's own policy, checked by `extender.engine.policy.load_policy`.

`render_config(...)` writes a KubeSchedulerConfiguration v1 that registers the extender and
passes `check_config`. Both are pure: the only I/O is reading the file named.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from extender.engine.args import NEWEST_VERSION, Version
from extender.model.yamltext import yaml_error
from extender.ops import kubesched, kubeversions, legacypolicy
from extender.ops.crosscheck import DEFAULT_BIND_DEADLINE, check_pair, check_replicas
from extender.ops.deployability import check_deployable
from extender.ops.fields import format_go_duration, load_documents, parse_go_duration
from extender.ops.objects import pods
from extender.ops.problems import Collector, Problem
from extender.ops.wiring import check_wiring, flag_value, is_extender

__all__ = ["VERBS", "ExtenderTLS", "Problem", "check_config", "check_document",
           "render_config"]

VERBS = ("filter", "prioritize", "preempt", "bind")
DEFAULT_URL = "http://127.0.0.1:8888"
DEFAULT_SCHEDULER_NAME = "extender-scheduler"
DEFAULT_LEASE_NAMESPACE = "scheduler-extender"


@dataclass(frozen=True)
class ExtenderTLS:
    """kube-scheduler's side of TLS (`extenders[].tlsConfig`): file paths inside its pod.

    `ca_file` verifies the extender's serving certificate; `cert_file`/`key_file` are the client
    certificate the extender demands under mutual TLS (`serve --tls-client-ca-file`).
    """

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None
    insecure: bool = False

    def as_config(self) -> dict[str, Any]:
        fields = {"caFile": self.ca_file, "certFile": self.cert_file, "keyFile": self.key_file,
                  "serverName": self.server_name, "insecure": self.insecure or None}
        return {key: value for key, value in fields.items() if value}


# --- checking --------------------------------------------------------------------------------


def read_text(path: str | Path, stdin: str | None = None) -> str:
    """A file's text; `-` is standard input (`stdin`: its text when already read)."""
    if str(path) == "-":
        return sys.stdin.read() if stdin is None else stdin
    return Path(path).read_text(encoding="utf-8")


def check_config(path: str | Path, version: Version = NEWEST_VERSION, *,
                 scheduler_plugins: bool = False, stdin: str | None = None) -> list[Problem]:
    """Every problem in one file, errors and warnings: keys and types first, then rules.
    A KubeSchedulerConfiguration is judged as kube-scheduler `version` (1, N) reads it;
    `scheduler_plugins`: as a kube-scheduler built with scheduler-plugins' plugins (the
    simulator's), which knows the extender registry's out-of-tree plugins too. `stdin`: the
    text of `-` when it was read already."""
    out = Collector(str(path))
    try:
        text = read_text(path, stdin)
    except (OSError, UnicodeDecodeError) as exc:
        out.error("", f"cannot read: {exc}")
        return out.problems
    try:
        documents, duplicates = load_documents(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        out.error(where, f"not valid YAML or JSON: {getattr(exc, 'problem', None) or exc}")
        return out.problems
    documents = [d for d in documents if d is not None]
    if not documents:
        out.error("", "empty file")
        return out.problems
    if _are_manifests(documents):
        items = [i for d in documents for i in (d.get("items") or [] if d.get("kind") == "List"
                                                 else [d])]
        check_manifests(items, out)
        return out.problems
    doc = documents[0]
    if len(documents) > 1:
        out.warning("", f"{len(documents)} YAML documents: only the first is read")
    strict = isinstance(doc, dict) and doc.get("kind") == kubesched.KIND
    for line, key in sorted(duplicates):
        # sigs.k8s.io/yaml rejects duplicates; JSON and PyYAML keep the last value silently.
        report = out.error if strict else out.warning
        report(f"line {line}", f"duplicate key {key!r}")
    if not isinstance(doc, dict):
        out.error("", "expected a mapping with apiVersion and kind")
        return out.problems
    if doc.get("kind") == "ExtenderPolicy":
        out.problems.extend(_check_extender_policy(doc, str(path)))
    else:
        check_document(doc, out, version, scheduler_plugins=scheduler_plugins)
    return out.problems


def check_document(doc: dict[str, Any], out: Collector,
                   version: Version = NEWEST_VERSION, *, scheduler_plugins: bool = False) -> None:
    """Checks for an already-parsed KubeSchedulerConfiguration or legacy Policy
    (`scheduler_plugins`: see `check_config`)."""
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    if kind == kubesched.KIND:
        verdict = (kubeversions.api_version_problem(api_version, version)
                   if isinstance(api_version, str) else None)
        if api_version in kubeversions.API_VERSIONS and (verdict is None or verdict[0] == "warning"):
            if verdict is not None:
                out.warning("apiVersion", verdict[1])
            _check_configuration(doc, out, version, api_version, scheduler_plugins)
        else:
            if verdict is not None:
                out.error("apiVersion", verdict[1])
            elif api_version in kubeversions.RETIRED_API_VERSIONS:
                out.error("apiVersion", f"{api_version} is no longer served by kube-scheduler; "
                          f"use {kubesched.API_V1}")
            elif isinstance(api_version, str) and api_version.startswith(kubesched.GROUP + "/"):
                known = ", ".join(sorted({*kubeversions.API_VERSIONS,
                                          *kubeversions.RETIRED_API_VERSIONS}))
                out.error("apiVersion", f"unknown apiVersion {api_version}: kube-scheduler "
                          f"never had it (it had {known}); use {kubesched.API_V1}")
            else:
                out.error("apiVersion", f"must be {kubesched.API_V1} (or a version kube-scheduler "
                          f"{kubeversions.format_version(version)} still reads), got "
                          f"{api_version!r}")
            # Every other problem too, as if the file said v1: one run lists them all.
            _check_configuration(doc, out, version, kubesched.API_V1, scheduler_plugins)
    elif kind == legacypolicy.KIND:
        legacypolicy.check_policy(doc, out)
    else:
        what = "no kind" if kind is None else f"unknown kind {kind!r}"
        out.error("kind", f"{what}: expected {kubesched.KIND}, "
                  f"{legacypolicy.KIND} (legacy) or ExtenderPolicy")


def summary(path: str | Path, version: Version = NEWEST_VERSION, stdin: str | None = None) -> str:
    """What `check-config` says of a file without errors: its kind and what it holds (`-`,
    standard input, only from `stdin`, its text)."""
    if str(path) == "-" and stdin is None:
        return "standard input"
    try:
        documents, _ = load_documents(read_text(path, stdin))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return "unreadable"
    documents = [d for d in documents if d is not None]
    if documents and _are_manifests(documents):
        return f"manifests: {len(documents)} object(s){_manifests_held(documents)}"
    doc = next((d for d in documents if d is not None), None)
    if not isinstance(doc, dict):
        return "empty"
    kind = doc.get("kind")
    if kind == kubesched.KIND:
        profiles = doc.get("profiles") if isinstance(doc.get("profiles"), list) else []
        extenders = doc.get("extenders") if isinstance(doc.get("extenders"), list) else []
        return (f"{kind} {doc.get('apiVersion')} as kube-scheduler "
                f"{kubeversions.format_version(version)} reads it: "
                f"{len(profiles) or 1} profile(s), {len(extenders)} extender(s)")
    if kind == "ExtenderPolicy":
        from extender.engine.policy import parse_policy
        from extender.engine.profile import build_profile

        profile = build_profile(parse_policy(doc, str(path)))
        return (f"ExtenderPolicy: {len(profile.filter_names)} filter(s), "
                f"{len(profile.scorers)} scorer(s)")
    if kind == legacypolicy.KIND:
        return "legacy Policy, for kube-scheduler before 1.23"
    return str(kind)


def _check_configuration(doc: dict[str, Any], out: Collector, version: Version,
                         api_version: str, scheduler_plugins: bool = False) -> None:
    """`kubesched`'s checks, with the verdicts that depend on the release made here instead
    (`kubeversions`: which plugins and API versions a release has): its apiVersion
    deprecation note assumes the newest release."""
    inner = Collector(out.file)
    kubesched.check_configuration(doc, inner)
    for problem in inner.problems:
        if problem.path == "apiVersion" and problem.severity == "warning":
            continue
        out.problems.append(problem)
    _check_plugin_names(doc, out, version, api_version, scheduler_plugins)


def _check_plugin_names(doc: dict[str, Any], out: Collector, version: Version,
                        api_version: str, scheduler_plugins: bool = False) -> None:
    """Every plugin a profile names must exist in kube-scheduler `version` (in tree) or in the
    extender's registry: an unknown enabled plugin stops kube-scheduler (`"X" does not exist`);
    an unknown disabled one or configuration is ignored by it, so only a warning."""
    out_of_tree = kubeversions.out_of_tree_plugins() if scheduler_plugins else set()
    profiles = doc.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else ()):
        if not isinstance(profile, dict):
            continue
        plugins = profile.get("plugins")
        for point, plugin_set in (plugins.items() if isinstance(plugins, dict) else ()):
            if not isinstance(plugin_set, dict):
                continue
            for list_name in ("enabled", "disabled"):
                entries = plugin_set.get(list_name)
                for j, entry in enumerate(entries if isinstance(entries, list) else ()):
                    name = entry.get("name") if isinstance(entry, dict) else None
                    if not isinstance(name, str) or (list_name == "disabled" and name == "*") \
                            or name in out_of_tree:
                        continue
                    message = kubeversions.plugin_problem(name, version, api_version)
                    if message is None:
                        continue
                    where = f"profiles[{i}].plugins.{point}.{list_name}[{j}].name"
                    if list_name == "enabled":
                        out.error(where, message)
                    else:
                        out.warning(where, f"{message} (kube-scheduler ignores it)")
        configs = profile.get("pluginConfig")
        for j, config in enumerate(configs if isinstance(configs, list) else ()):
            name = config.get("name") if isinstance(config, dict) else None
            if not isinstance(name, str) or name in out_of_tree:
                continue
            message = kubeversions.plugin_problem(name, version, api_version)
            if message is None:
                continue
            where = f"profiles[{i}].pluginConfig[{j}].name"
            if message.startswith("unknown"):
                out.warning(where, f"{message} (kube-scheduler ignores its arguments)")
            else:
                out.error(where, message)


CONFIG_KINDS = (kubesched.KIND, legacypolicy.KIND, "ExtenderPolicy")


def _manifests_held(documents: list[Any]) -> str:
    """A note when rendered manifests hold nothing of the extender's (an unrelated file)."""
    items = [d for d in documents if isinstance(d, dict)]
    for doc in items[:]:
        if doc.get("kind") == "List":
            items += [i for i in doc.get("items") or [] if isinstance(i, dict)]
    if any(is_extender(c.argv) for pod in pods(items) for c in pod.containers):
        return ""
    for doc in items:
        if doc.get("kind") == "ConfigMap" and any(
                isinstance(text, str) and f"kind: {kind}" in text
                for text in (doc.get("data") or {}).values()
                for kind in (kubesched.KIND, "ExtenderPolicy")):
            return ""
    return "; no KubeSchedulerConfiguration, ExtenderPolicy or extender among them"


def _are_manifests(documents: list[Any]) -> bool:
    """Kubernetes objects (`kubectl kustomize` output, or a List) rather than one file to check."""
    first = documents[0]
    return isinstance(first, dict) and first.get("kind") not in CONFIG_KINDS and (
        first.get("kind") == "List" or any(
            isinstance(d, dict) and d.get("kind") in ("ConfigMap", "Deployment")
            for d in documents))


def check_manifests(documents: Iterable[Any], out: Collector) -> None:
    """Rendered manifests: every KubeSchedulerConfiguration and ExtenderPolicy a ConfigMap
    carries, checked alone and against each other, the extender's Deployment against them,
    whether the objects connect (`wiring`) and whether they can run (`deployability`)."""
    from extender.engine.policy import PolicyError, parse_policy

    documents = list(documents)
    #: Each KubeSchedulerConfiguration: where, its ConfigMap's name and namespace, itself.
    configs: list[tuple[str, str, str, dict[str, Any]]] = []
    policies: list[Any] = []
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        kind, name = doc.get("kind"), (doc.get("metadata") or {}).get("name", "")
        namespace = str((doc.get("metadata") or {}).get("namespace", ""))
        if kind == "ConfigMap":
            for key, text in (doc.get("data") or {}).items():
                try:
                    inner = yaml.safe_load(text)
                except yaml.YAMLError as exc:
                    out.error(f"ConfigMap/{name}[{key}]", f"not valid YAML: {yaml_error(exc)}")
                    continue
                if not isinstance(inner, dict):
                    continue
                where = f"ConfigMap/{name}[{key}]"
                if inner.get("kind") == "KubeSchedulerConfiguration":
                    inner_out = Collector(out.file)
                    check_document(inner, inner_out)
                    out.problems.extend(p.__class__(p.file, f"{where}: {p.path}", p.message,
                                                    p.severity) for p in inner_out.problems)
                    configs.append((f"{where}: ", str(name), namespace, inner))
                elif inner.get("kind") == "ExtenderPolicy":
                    try:
                        policies.append(parse_policy(inner, where))
                    except PolicyError as exc:
                        out.problems.extend(policy_problems(out.file, exc, prefix=f"{where}: "))
    extenders = [(pod.deployment, pod.replicas, c.argv)
                 for pod in pods([d for d in documents if isinstance(d, dict)])
                 for c in pod.containers if is_extender(c.argv)]
    for policy in policies:
        deadlines = [float(d) for _, _, args in extenders
                     if (d := flag_value(args, "--bind-deadline")) is not None]
        for where, _, _, config in configs:
            check_pair(config, policy, out, where,
                       deadlines[0] if deadlines else DEFAULT_BIND_DEADLINE)
        for name, replicas, args in extenders:
            check_replicas(name, replicas, args, policy, out)
    check_wiring(documents, configs, out)
    check_deployable(documents, policies, out)
    out.problems[:] = without_shadowed_warnings(out.problems)


def _check_extender_policy(doc: Any, file: str) -> list[Problem]:
    from extender.engine.policy import PolicyError, parse_policy

    try:
        parse_policy(doc, file)
    except PolicyError as exc:
        return policy_problems(file, exc)
    return []


def policy_problems(file: str, exc: Any, prefix: str = "") -> list[Problem]:
    """A `PolicyError`'s lines ("<path>: <message>", as the loader formats them) as problems."""
    problems = []
    for line in exc.problems:
        where, sep, message = line.partition(": ")
        if not sep or " " in where:
            where, message = "", line
        problems.append(Problem(file, f"{prefix}{where}", message))
    return problems


def check_files(paths: list[str], version: Version = NEWEST_VERSION,
                stdin: str | None = None, notes: list[str] | None = None, *,
                release_given: bool = False) -> list[Problem]:
    """Each file's problems, then what the KubeSchedulerConfigurations and the one
    ExtenderPolicy given together say of each other (`crosscheck`); `stdin`: the text of `-`,
    read once. With several policies no pair is checked (which configuration goes with which
    policy is not for this check to guess), and `notes` gets a line saying so.
    `release_given`: `version` was asked for, and no release it can name reads a legacy Policy."""
    problems = [p for path in paths for p in check_config(path, version, stdin=stdin)]
    configs, policies = [], []
    for path in paths:
        if release_given and _kind_of(path, stdin) == legacypolicy.KIND:
            problems.append(Problem(path, "kind", (
                f"kube-scheduler {kubeversions.format_version(version)} reads no legacy Policy "
                "file (--policy-config-file went in 1.23): migrate it to a "
                f"{kubesched.KIND}; without --kubernetes-version it is checked as the older "
                "release that reads it")))
        if (path == "-" and stdin is None) or any(
                p.file == path and p.severity == "error" for p in problems):
            continue
        try:
            documents, _ = load_documents(read_text(path, stdin))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        doc = next((d for d in documents if d is not None), None)
        if isinstance(doc, dict) and doc.get("kind") == kubesched.KIND:
            configs.append((path, doc))
        elif isinstance(doc, dict) and doc.get("kind") == "ExtenderPolicy":
            from extender.engine.policy import parse_policy

            policies.append((path, parse_policy(doc, path)))
    if configs and len(policies) == 1:
        for path, config in configs:
            out = Collector(path)
            check_pair(config, policies[0][1], out)
            problems.extend(out.problems)
    elif configs and policies and notes is not None:
        notes.append(f"{len(policies)} ExtenderPolicy files given ({', '.join(p for p, _ in policies)}):"
                     " no KubeSchedulerConfiguration is checked against a policy; give one "
                     "policy with the configurations that call its extender")
    return without_shadowed_warnings(problems)


def _kind_of(path: str, stdin: str | None) -> Any:
    try:
        documents, _ = load_documents(read_text(path, stdin))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None
    doc = next((d for d in documents if d is not None), None)
    return doc.get("kind") if isinstance(doc, dict) else None


def without_shadowed_warnings(problems: list[Problem]) -> list[Problem]:
    """`problems` less each warning about a field an error names too: the error says more
    (an ignorable binder is a warning alone, an error beside a stateful policy)."""
    errors = {(p.file, p.path) for p in problems if p.severity == "error"}
    return [p for p in problems if p.severity == "error" or (p.file, p.path) not in errors]


# --- rendering -------------------------------------------------------------------------------


def render_config(
    url: str = DEFAULT_URL,
    *,
    verbs: Sequence[str] = VERBS,
    weight: int = 1,
    node_cache: bool = True,
    managed_resources: Sequence[str] = (),
    ignored_by_scheduler: bool = False,
    timeout: str | float = "5s",
    tls: ExtenderTLS | None = None,
    ignorable: bool = False,
    scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    leader_election: bool = True,
    lease_namespace: str = DEFAULT_LEASE_NAMESPACE,
    kubeconfig: str | None = None,
) -> str:
    """YAML of a KubeSchedulerConfiguration v1 with one profile and the extender registered.

    `timeout` is a Go duration string or seconds. The lease is named after the scheduler so a
    second scheduler never contends for the default scheduler's `kube-scheduler` lease.
    Raises ValueError if the result would not pass `check_config`.
    """
    unknown = [v for v in verbs if v not in VERBS]
    if unknown:
        raise ValueError(f"unknown verb(s) {', '.join(unknown)}; choose from {', '.join(VERBS)}")
    if isinstance(timeout, int | float):
        timeout = format_go_duration(float(timeout))
    parse_go_duration(timeout)  # ValueError with Go's wording if malformed
    https = url.startswith("https://")
    if ignored_by_scheduler and not managed_resources:
        raise ValueError("--ignored-by-scheduler marks the managed resources, and none is given "
                         "(--managed-resource NAME, once per resource)")
    if tls is not None and tls.as_config() and not https:
        raise ValueError("TLS settings need an https:// URL (enableHTTPS does not change the scheme)")

    extender: dict[str, Any] = {"urlPrefix": url.rstrip("/")}
    for verb in VERBS:
        if verb in verbs:
            extender[f"{verb}Verb"] = verb
            if verb == "prioritize":
                extender["weight"] = weight
    extender["enableHTTPS"] = https
    if tls is not None and tls.as_config():
        extender["tlsConfig"] = tls.as_config()
    extender["httpTimeout"] = timeout
    extender["nodeCacheCapable"] = node_cache
    if managed_resources:
        extender["managedResources"] = [
            {"name": name, **({"ignoredByScheduler": True} if ignored_by_scheduler else {})}
            for name in managed_resources]
    extender["ignorable"] = ignorable

    config: dict[str, Any] = {"apiVersion": kubesched.API_V1, "kind": kubesched.KIND}
    if kubeconfig:
        config["clientConnection"] = {"kubeconfig": kubeconfig}
    config["leaderElection"] = (
        {"leaderElect": True, "resourceLock": "leases", "resourceNamespace": lease_namespace,
         "resourceName": scheduler_name} if leader_election else {"leaderElect": False})
    config["profiles"] = [{"schedulerName": scheduler_name}]
    config["extenders"] = [extender]

    out = Collector("<rendered>")
    check_document(config, out)
    errors = [p for p in out.problems if p.severity == "error"]
    if errors:
        raise ValueError("; ".join(f"{p.path}: {p.message}" for p in errors))
    header = ("# KubeSchedulerConfiguration written by `extender render-config`.\n"
              "# Check edits with `extender check-config FILE`.\n")
    return header + yaml.safe_dump(config, sort_keys=False, default_flow_style=False)

