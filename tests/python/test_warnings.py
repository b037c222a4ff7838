"""The compiler's warnings and notes reach Python as tenet.CompileWarning."""

import warnings

import pytest

import tenet

HINTED = """def mm(float(M, K) A, float(K, N) B) -> (C) {
  C(i, j) +=! A(i, k) * B(k, j) <=> matmul(A, B)
}
"""

SMALLER = """def f(float(N) x, float(M) y) -> (z) {
  z(i) = x(i) + y(i)
}
"""


def test_a_reduction_hint_is_a_compile_warning():
    with pytest.warns(tenet.CompileWarning) as caught:
        tenet.compile(HINTED, filename="mm.tn")
    assert [str(w.message) for w in caught] == [
        "mm.tn:2:33: warning: the reduction hint '<=> ...' is ignored: Tenet chooses how to "
        "compute reductions itself\n"
        "    C(i, j) +=! A(i, k) * B(k, j) <=> matmul(A, B)\n"
        "                                  ^~~~~~~~~~~~~~~~"]
    assert caught[0].filename == __file__  # points at the caller of tenet.compile


def test_the_warning_points_at_the_users_call(tmp_path):
    path = tmp_path / "mm.tn"
    path.write_text(HINTED)
    with pytest.warns(tenet.CompileWarning) as caught:
        tenet.compile_file(path)
    assert caught[0].filename == __file__
    assert str(caught[0].message).startswith(f"{path}:2:33: warning: ")


def test_the_smaller_range_is_a_note_with_each_use():
    with pytest.warns(tenet.CompileWarning) as caught:
        tenet.compile(SMALLER, filename="z.tn")
    assert len(caught) == 1
    text = str(caught[0].message)
    assert text.startswith("z.tn:2:5: note: index 'i' ranges over [0, min(M, N)), the smallest "
                           "size of its uses (as in TC)\n")
    assert "z.tn:2:19: note: dimension 0 of 'y' has size M" in text


def test_a_program_without_warnings_issues_none():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tenet.compile(SMALLER.replace("float(M) y", "float(N) y"))
