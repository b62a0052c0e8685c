"""The shipped manifests, and what the registry and manifest rules make of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lsp.core.checking.analyze import analyze_file, analyze_workspace
from rag_lsp.core.workspace.manifests import GDI_TEXT, RAG_CASE, ManifestRegistry
from rag_lsp.core.reading.resources import builtin_manifest_paths
from rag_lsp.core.reading.text import Range
from rag_lsp.core.workspace.workspace import MANIFEST_FILE, Workspace

RAG_METRICS = ["rag.recall", "rag.precision", "rag.mrr", "rag.hit@1", "rag.retrieved", "rag.mode.semantic"]


@pytest.mark.parametrize("path", builtin_manifest_paths(), ids=lambda path: path.name)
def test_builtin_manifest_is_clean(path: Path) -> None:
    """A shipped manifest gets no finding at all (RAG300–RAG302 included) when checked as a manifest."""
    workspace = Workspace(path.parent.parent)
    findings = analyze_file(workspace, workspace.relative(path), kind=MANIFEST_FILE)
    assert [f"{finding.range} {finding.code} {finding.message}" for finding in findings] == []


def test_builtin_manifests_are_the_rag_and_ir_engines_and_hit_at_k() -> None:
    """The package ships exactly the `rag` and `ir` engines and the `rag.hit_at_k` metric."""
    registry = ManifestRegistry.builtins()
    assert sorted(registry.manifests) == ["ir", "rag", "rag.hit_at_k"]
    assert registry.engines == ["ir", "rag"]


def test_a_metric_declared_at_k_is_known_at_every_positive_cutoff() -> None:
    """`ir.nDCG@k` makes ir.nDCG@10 and ir.nDCG@1 known, not ir.nDCG@0 or @010; literal names stay literal (rag.hit@2)."""
    registry = ManifestRegistry.builtins()
    for name in ("ir.nDCG@10", "ir.nDCG@1", "ir.P@5", "ir.R@1000", "ir.Judged@10", "ir.AP", "ir.RR"):
        info = registry.metric(name)
        assert info is not None and info.manifest == "ir" and (info.minimum, info.maximum) == (0, 1), name
    for name in ("ir.nDCG@0", "ir.nDCG@010", "ir.P", "ir.Judged", "rag.hit@2", "ir.MAP"):
        assert registry.metric(name) is None, name


def test_rag_engine_emits_its_six_metrics() -> None:
    """Engine `rag` emits recall, precision, MRR, hit@1, retrieved and mode.semantic, on rag cases."""
    engine = ManifestRegistry.builtins().engine("rag")
    assert engine is not None
    assert [metric.name for metric in engine.metrics] == RAG_METRICS
    assert engine.accepts == frozenset({RAG_CASE})


def test_rag_retrieved_is_the_only_counter() -> None:
    """`rag.retrieved` is a counter without an upper bound; every other rag metric lies in 0..1."""
    registry = ManifestRegistry.builtins()
    counters = [name for name in RAG_METRICS if registry.metric(name).counter]
    assert counters == ["rag.retrieved"]
    assert registry.metric("rag.retrieved").range_text() == "0..inf"
    assert {registry.metric(name).range_text() for name in RAG_METRICS if name != "rag.retrieved"} == {"0..1"}


def test_hit_at_k_is_a_0_to_1_metric_over_gdi_rows() -> None:
    """`rag.hit_at_k` is a higher-is-better metric in 0..1 that accepts gdi_text_v1 rows."""
    registry = ManifestRegistry.builtins()
    metric = registry.metric("rag.hit_at_k")
    assert metric is not None and not metric.counter and metric.higher_is_better
    assert (metric.minimum, metric.maximum) == (0, 1)
    assert registry.metric_manifest("rag.hit_at_k").accepts == frozenset({GDI_TEXT})


def _manifest(name: str) -> str:
    return (
        "manifest_version: '1'\nkind: metric\n"
        f"name: {name}\n"
        "version: 1.0.0\ndirection: higher_is_better\naccepts: [{name: gdi_text_v1}]\nconfig_schema: {type: object}\n"
    )


def test_duplicate_manifest_name_points_at_the_first_file(tmp_path: Path) -> None:
    """RAG303 sits on the later file's `name` and its related information on the first file's."""
    metrics = tmp_path / ".punica" / "metrics"
    metrics.mkdir(parents=True)
    (metrics / "a.yaml").write_text(_manifest("team.words"), encoding="utf-8")
    (metrics / "b.yaml").write_text(_manifest("team.words"), encoding="utf-8")
    findings = analyze_workspace(Workspace(tmp_path))
    assert findings[".punica/metrics/a.yaml"] == []
    (finding,) = findings[".punica/metrics/b.yaml"]
    assert (finding.code, finding.range) == ("RAG303", Range.of(2, 6, 2, 16))
    (related,) = finding.related
    assert (related.path, related.range) == (".punica/metrics/a.yaml", Range.of(2, 6, 2, 16))


def test_overriding_a_builtin_is_not_a_duplicate(tmp_path: Path) -> None:
    """A workspace manifest named like a built-in replaces it, with no RAG303."""
    metrics = tmp_path / ".punica" / "metrics"
    metrics.mkdir(parents=True)
    (metrics / "hit.yaml").write_text(_manifest("rag.hit_at_k"), encoding="utf-8")
    workspace = Workspace(tmp_path)
    assert analyze_workspace(workspace) == {".punica/metrics/hit.yaml": []}
    assert workspace.manifests().metric_manifest("rag.hit_at_k").path == ".punica/metrics/hit.yaml"
