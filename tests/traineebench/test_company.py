"""The day's company is built as the reference builds it: the same departments, positions and headcounts for a
size, names drawn by the day's seed."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from occubench.traineebench.company import AGENT, DEPARTMENTS, EXECUTIVE, by_largest_remainder, make_company


def test_fifty_employees_in_the_reference_s_structure() -> None:
    company = make_company(random.Random(3))
    assert len(company.employees) == 50 and len({e.name for e in company.employees}) == 50
    assert AGENT not in {e.name for e in company.employees}
    heads = Counter(e.department for e in company.employees)
    # All four executives at 50; the other 46 by the shares, rounded by largest remainders.
    assert heads[EXECUTIVE] == 4 and sum(heads.values()) == 50
    assert {name: heads[name] for name in DEPARTMENTS} == by_largest_remainder(46, {
        name: department.share for name, department in DEPARTMENTS.items()})
    for name in DEPARTMENTS:  # every department has a manager, reachable as the family contract asks
        assert "Manager" in company.manager_of(name).role
    assert make_company(random.Random(3)) == company and make_company(random.Random(4)) != company


def test_largest_remainders_sum_to_the_total() -> None:
    assert by_largest_remainder(7, {"a": 0.5, "b": 0.3, "c": 0.2}) == {"a": 4, "b": 2, "c": 1}
    assert by_largest_remainder(0, {"a": 1.0}) == {"a": 0}
    with pytest.raises(ValueError, match="at least 10"):
        make_company(random.Random(0), 5)
