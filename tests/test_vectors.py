"""The semantic index's coded vectors: what they keep of a vector, and similarities that are
exact whichever way they are summed."""

from __future__ import annotations

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rag_lsp.core.search import vectors as vectors_module
from rag_lsp.core.search.vectors import QuantizedVectors, levels, quantize

finite = st.floats(-1.0, 1.0, width=32, allow_subnormal=False)


def unit_rows(rows: int, dim: int):
    """Rows of float32 vectors scaled to length 1 (a row of zeros stays one)."""

    def scaled(array: numpy.ndarray) -> numpy.ndarray:
        norms = numpy.linalg.norm(array, axis=1, keepdims=True)
        return numpy.divide(array, norms, out=numpy.zeros_like(array), where=norms > 0).astype(numpy.float32)

    return arrays(numpy.float32, (rows, dim), elements=finite).map(scaled)


def exact(index: QuantizedVectors, queries: numpy.ndarray) -> numpy.ndarray:
    """The similarities summed in 64-bit integers, then scaled as similarities() scales them."""
    codes, scales = quantize(queries, levels(index.dim))
    products = (codes.astype(numpy.int64) @ index.codes.astype(numpy.int64).T).astype(numpy.float32)
    products *= scales[:, None]
    products *= index.scales[None, :]
    return products


@pytest.fixture(params=["simsimd", "numpy"])
def scan(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """One query's scan by simsimd's kernels, or by numpy's slabs where simsimd is not installed."""
    if request.param == "numpy":
        monkeypatch.setattr(vectors_module, "_simsimd", lambda: None)
    return request.param


# The fixture patches the module once for every example, which is what is wanted here.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from([3, 16, 256]).flatmap(
        lambda dim: st.tuples(
            st.integers(0, 40).flatmap(lambda rows: unit_rows(rows, dim)),
            st.integers(1, 6).flatmap(lambda count: unit_rows(count, dim)),
        )
    )
)
def test_a_block_of_queries_gets_each_querys_own_similarities_to_the_last_bit(scan: str, case: tuple) -> None:
    """A block's matrix product and each query's own scan give the same float32 similarities, bit for
    bit, equal to the codes' dot products summed in 64-bit integers."""
    chunks, queries = case
    index = QuantizedVectors.of(chunks)
    block = index.similarities(queries)
    assert block.shape == (len(queries), len(chunks)) and block.dtype == numpy.float32
    for row, query in enumerate(queries):
        alone = index.similarities(query[None, :])
        assert alone.tobytes() == block[row].tobytes()
    assert block.tobytes() == exact(index, queries).tobytes()
    assert index.similarities(queries, index.expanded()).tobytes() == block.tobytes()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 5, 256, 1024]).flatmap(lambda dim: unit_rows(8, dim)))
def test_a_coded_vector_is_its_vector_to_within_half_a_step(vectors: numpy.ndarray) -> None:
    """Decoding gives each component back to within half its row's step, and a similarity is the
    vectors' dot product to within what those half steps can add up to."""
    index = QuantizedVectors.of(vectors)
    steps = index.scales.astype(numpy.float64)
    assert (numpy.abs(index.decoded() - vectors) <= steps[:, None] / 2 + 1e-7).all()
    similar = index.similarities(vectors).astype(numpy.float64)
    true = vectors.astype(numpy.float64) @ vectors.T.astype(numpy.float64)
    # (a + e)·(b + f) - a·b = a·f + e·b + e·f, with |e_i| <= step_a / 2 and |f_i| <= step_b / 2.
    sums = numpy.abs(vectors).sum(axis=1).astype(numpy.float64)
    dim = vectors.shape[1]
    bound = (sums[:, None] * steps[None, :] + steps[:, None] * sums[None, :]) / 2 + numpy.outer(steps, steps) * dim / 4
    assert (numpy.abs(similar - true) <= bound + 1e-5).all()


def test_a_row_of_zeros_is_coded_as_zeros_and_scores_zero() -> None:
    """A chunk with no token the model knows (a zero vector) scores 0 against any query."""
    index = QuantizedVectors.of(numpy.zeros((2, 4), dtype=numpy.float32))
    assert not index.codes.any() and not index.scales.any()
    assert index.similarities(numpy.array([[0.5, 0.5, 0.5, 0.5]], dtype=numpy.float32)).tolist() == [[0.0, 0.0]]


@pytest.mark.parametrize("dim", [1, 256, 1040, 1041, 4096, 1 << 20])
def test_the_codes_range_keeps_every_dot_product_below_two_to_the_24(dim: int) -> None:
    """However many dimensions, the largest possible dot product of two codes is held exactly in float32."""
    top = levels(dim)
    assert 1 <= top <= 127 and top * top * dim < 1 << 24
    assert top == 127 or (top + 1) ** 2 * dim >= 1 << 24


def test_an_empty_index_has_no_similarities(scan: str) -> None:
    """Queries asked of an index with no row get rows of nothing."""
    index = QuantizedVectors.join([], 8)
    query = numpy.ones((1, 8), dtype=numpy.float32) / numpy.sqrt(8)
    assert index.similarities(query).shape == (1, 0)
    assert index.similarities(numpy.vstack([query, query])).shape == (2, 0)
