"""What the builders of one case share: its random stream, id pools and warehouse."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .ids import CUSTOMER_PREFIX, ORDER_PREFIX, IdPool
from .rows import WAREHOUSE_CUSTOMERS, WAREHOUSE_ORDERS, customer_rows, order_rows


@dataclass
class CaseContext:
    """State of one case under construction.

    ``featured`` collects warehouse customers that a customers batch re-sends, so a
    clean orders batch beside it can carry orders for exactly those customers.
    The ``spent`` sets keep a warehouse row from being re-sent twice while others remain.
    """

    rng: random.Random
    customer_ids: IdPool
    order_ids: IdPool
    wh_customers: list[dict[str, str]] = field(default_factory=list)
    wh_orders: list[dict[str, str]] = field(default_factory=list)
    featured: list[str] = field(default_factory=list)
    spent_orders: set[int] = field(default_factory=set)
    spent_customers: set[int] = field(default_factory=set)

    @classmethod
    def open(cls, rng: random.Random, customer_digits: int, order_digits: int) -> CaseContext:
        """A context with a fresh warehouse of 20 customers and 30 of their orders."""
        ctx = cls(rng, IdPool(rng, CUSTOMER_PREFIX, customer_digits), IdPool(rng, ORDER_PREFIX, order_digits))
        ctx.wh_customers = customer_rows(rng, ctx.customer_ids.take(WAREHOUSE_CUSTOMERS))
        refs = [row["customer_id"] for row in ctx.wh_customers]
        ctx.wh_orders = order_rows(rng, ctx.order_ids.take(WAREHOUSE_ORDERS), refs)
        return ctx

    @property
    def wh_customer_ids(self) -> list[str]:
        return [row["customer_id"] for row in self.wh_customers]

    def resend_order(self, sale_only: bool = False) -> dict[str, str]:
        """A copy of a warehouse order, preferring one not re-sent yet in this case.

        With ``sale_only`` the order is not a refund, so its status can be changed
        to another sale status without breaking the amount rule.
        """
        rows = self.wh_orders
        fits = [i for i in range(len(rows)) if not (sale_only and rows[i]["status"] == "refunded")]
        index = self._pick(fits or list(range(len(rows))), self.spent_orders)
        return dict(rows[index])

    def resend_customer(self) -> dict[str, str]:
        """An exact copy of a warehouse customer, preferring one not re-sent yet."""
        index = self._pick(list(range(len(self.wh_customers))), self.spent_customers)
        row = dict(self.wh_customers[index])
        self.featured.append(row["customer_id"])
        return row

    def _pick(self, options: list[int], spent: set[int]) -> int:
        """A random option, unspent if any is; re-sending the same row twice stays a duplicate."""
        fresh = [i for i in options if i not in spent] or options
        index = fresh[int(self.rng.random() * len(fresh))]
        spent.add(index)
        return index
