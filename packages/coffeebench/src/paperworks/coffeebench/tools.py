"""The tool API: JSON-schema functions in the OpenAI function-calling format, and their validation.

:data:`TOOLS` maps each tool name to its JSON schema (``parameters``); :func:`openai_tools` returns
the list an OpenAI-compatible chat-completions client takes as ``tools=`` (``{"type": "function",
"function": {"name", "description", "parameters"}}``, strict schemas: every property listed,
``additionalProperties: false``); :func:`validate_call` checks a call's arguments against the schema
(unknown tool, unknown or missing argument, wrong type) and raises :class:`ToolError`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .config import FIRMS, GREEN_ITEMS, ITEMS, RETAIL_ITEMS

__all__ = ["TOOLS", "TOOL_ROLES", "PRODUCTIVE_TOOLS", "ToolError", "openai_tools", "validate_call"]


class ToolError(ValueError):
    """A tool call the environment refuses; its message names the argument."""


_ALL = ("farmer", "roaster", "retailer")
_S = {"type": "string"}
_N = {"type": "number"}
_I = {"type": "integer"}


def _obj(props: dict[str, dict], required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


_TERMS = {"type": "integer", "description": "net-N payment terms in days after delivery (default 30)"}

# name -> (description, parameters schema, roles allowed)
_SPEC: dict[str, tuple[str, dict, tuple[str, ...]]] = {
    "view_listings": (
        "List open marketplace listings of other firms, cheapest first.",
        _obj({"item_id": {"type": "string", "enum": list(ITEMS)}}),
        _ALL,
    ),
    "post_listing": (
        "Post a public listing of goods you hold at a per-kg asking price.",
        _obj(
            {
                "item_id": {"type": "string", "enum": list(ITEMS)},
                "qty": _N,
                "asking_price": _N,
                "payment_terms_days": _TERMS,
            },
            ("item_id", "qty", "asking_price"),
        ),
        _ALL,
    ),
    "withdraw_listing": (
        "Close one of your listings (its open offers are withdrawn).",
        _obj({"listing_id": _S}, ("listing_id",)),
        _ALL,
    ),
    "update_listing": (
        "Change the kg and/or the asking price of one of your open listings (its open offers stay).",
        _obj({"listing_id": _S, "qty": _N, "asking_price": _N}, ("listing_id",)),
        _ALL,
    ),
    "make_offer": (
        "Bid on another firm's listing: per-kg price and kg; the seller accepts or rejects.",
        _obj(
            {"listing_id": _S, "offered_price": _N, "qty": _N, "payment_terms_days": _TERMS},
            ("listing_id", "offered_price", "qty"),
        ),
        _ALL,
    ),
    "propose_deal": (
        "Negotiate privately: send a firm a message carrying a binding offer to buy from "
        "(side='buy') or sell to "
        "(side='sell') it; the other firm accepts with accept_offer.",
        _obj(
            {
                "to": {"type": "string", "enum": list(FIRMS)},
                "side": {"type": "string", "enum": ["buy", "sell"]},
                "item_id": {"type": "string", "enum": list(ITEMS)},
                "qty": _N,
                "price": _N,
                "payment_terms_days": _TERMS,
                "message": _S,
            },
            ("to", "side", "item_id", "qty", "price"),
        ),
        _ALL,
    ),
    "accept_offer": (
        "Accept an open offer awaiting your answer: a binding deal; goods ship, an invoice follows "
        "on delivery.",
        _obj({"offer_id": _S}, ("offer_id",)),
        _ALL,
    ),
    "reject_offer": (
        "Reject an open offer awaiting your answer.",
        _obj({"offer_id": _S}, ("offer_id",)),
        _ALL,
    ),
    "withdraw_offer": ("Withdraw an open offer you made.", _obj({"offer_id": _S}, ("offer_id",)), _ALL),
    "view_offers": (
        "Open offers: 'incoming' (awaiting your answer), 'outgoing' (yours) or 'all'.",
        _obj({"direction": {"type": "string", "enum": ["incoming", "outgoing", "all"]}}),
        _ALL,
    ),
    "send_message": (
        "Send a free-text message to another firm.",
        _obj({"to": {"type": "string", "enum": list(FIRMS)}, "text": _S}, ("to", "text")),
        _ALL,
    ),
    "view_messages": ("Read your messages.", _obj({"unread_only": {"type": "boolean"}}), _ALL),
    "produce_item": (
        "Farmers: grow green coffee (cash cost now, ready after the production lag).",
        _obj(
            {"item_id": {"type": "string", "enum": list(GREEN_ITEMS)}, "quantity": _N},
            ("item_id", "quantity"),
        ),
        ("farmer",),
    ),
    "roast": (
        "Roasters: roast green coffee (labour paid now, roasted output after the lag, with weight loss).",
        _obj(
            {"green_item_id": {"type": "string", "enum": list(GREEN_ITEMS)}, "qty_kg": _N},
            ("green_item_id", "qty_kg"),
        ),
        ("roaster",),
    ),
    "set_retail_price": (
        "Retailers: set the consumer price per kg of a roasted item.",
        _obj(
            {"item_id": {"type": "string", "enum": list(RETAIL_ITEMS)}, "price_per_unit": _N},
            ("item_id", "price_per_unit"),
        ),
        ("retailer",),
    ),
    "view_consumer_sales": (
        "Retailers: your consumer sales of the last days.",
        _obj({"days_back": _I}),
        ("retailer",),
    ),
    "view_payables": ("Your open invoices to pay.", _obj({}), _ALL),
    "view_receivables": ("Your open invoices others owe you.", _obj({}), _ALL),
    "pay_invoice": (
        "Pay one of your invoices in full (late fees included).",
        _obj({"invoice_id": _S}, ("invoice_id",)),
        _ALL,
    ),
    "return_shipment": (
        "Return kg of a delivered purchase within the return window; the invoice is credited.",
        _obj({"invoice_id": _S, "quantity_kg": _N, "reason": _S}, ("invoice_id", "quantity_kg")),
        _ALL,
    ),
    "view_trial_balance": (
        "Your balance sheet, income by account, inventory and cost per kg.",
        _obj({}),
        _ALL,
    ),
    "wait_for_next_day": ("End your business day.", _obj({}), _ALL),
}

TOOLS: dict[str, dict] = {k: v[1] for k, v in _SPEC.items()}
TOOL_ROLES: dict[str, tuple[str, ...]] = {k: v[2] for k, v in _SPEC.items()}
# tools that change the firm's position (the idle-drift rate counts days with none of them succeeding)
PRODUCTIVE_TOOLS = frozenset(
    {
        "post_listing",
        "update_listing",
        "make_offer",
        "propose_deal",
        "accept_offer",
        "send_message",
        "produce_item",
        "roast",
        "set_retail_price",
        "pay_invoice",
        "return_shipment",
    }
)


def openai_tools(role: str | None = None) -> list[dict[str, Any]]:
    """The tools (of one role, or all) as OpenAI function-calling definitions."""
    if role is not None and role not in _ALL:
        raise ValueError(f"role: expected one of {_ALL} or None, got {role!r}")
    out = []
    for name, (desc, params, roles) in _SPEC.items():
        if role is None or role in roles:
            out.append(
                {"type": "function", "function": {"name": name, "description": desc, "parameters": params}}
            )
    return out


def _check(name: str, key: str, schema: dict, v: Any) -> Any:
    t = schema["type"]
    where = f"{name}.{key}"
    if t == "string":
        if not isinstance(v, str):
            raise ToolError(f"{where}: expected a string, got {v!r}")
        if "enum" in schema and v not in schema["enum"]:
            raise ToolError(f"{where}: expected one of {schema['enum']}, got {v!r}")
        return v
    if t == "boolean":
        if not isinstance(v, bool):
            raise ToolError(f"{where}: expected true or false, got {v!r}")
        return v
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ToolError(f"{where}: expected a number, got {v!r}")
    if not math.isfinite(v):
        raise ToolError(f"{where}: expected a finite number, got {v!r}")
    if t == "integer":
        if float(v) != int(v):
            raise ToolError(f"{where}: expected an integer, got {v!r}")
        return int(v)
    return float(v)


def validate_call(name: Any, arguments: Any) -> dict[str, Any]:
    """Checked keyword arguments of a call; ``arguments`` a dict or a JSON object string (or None)."""
    if not isinstance(name, str) or name not in TOOLS:
        raise ToolError(f"tool: unknown tool {name!r}; tools are {sorted(TOOLS)}")
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as e:
            raise ToolError(f"{name}: arguments are not valid JSON ({e.msg})") from None
    if not isinstance(arguments, dict):
        raise ToolError(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    schema = TOOLS[name]
    props = schema["properties"]
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise ToolError(f"{name}: unknown arguments {unknown}; expected {sorted(props)}")
    missing = [k for k in schema["required"] if k not in arguments]
    if missing:
        raise ToolError(f"{name}: missing arguments {missing}")
    return {
        k: _check(name, k, props[k], v)
        for k, v in arguments.items()
        if v is not None or k in schema["required"]
    }
