"""CoffeeBench (arXiv 2606.16613): a seedable multi-agent coffee supply-chain economy for long-horizon agents.

Six firms (2 farmers, 2 roasters, 2 retailers) trade over 90 business days through JSON-schema
tools; the truth ledger scores each firm's net income. Scripted reference and behavioural agents,
an OpenAI-compatible LLM adapter, a PettingZoo AEC environment (``pz_env``, extra ``pettingzoo``),
a gymnasium wrapper (``gym_env``, extra ``gymnasium``) and a viewer (``viewer``, extra ``viewer``
for the terminal).
"""

from .agents import (
    Agent,
    HeuristicRoaster,
    Negotiator,
    PassiveAgent,
    ReactiveTrader,
    ReferenceFarmer,
    ReferenceRetailer,
    ScriptedAgent,
    reference_agents,
)
from .closed_form import passive_net_income
from .config import FIRMS, ITEMS, ROLES, EconomyConfig
from .demand import DemandModel, shop_sales
from .engine import Economy
from .llm import OpenAIChatAgent, ReplayClient
from .runner import Episode, EpisodeResult, JsonlLog, read_jsonl, run_episode
from .tools import TOOLS, ToolError, openai_tools, validate_call

__all__ = [
    "FIRMS",
    "ITEMS",
    "ROLES",
    "TOOLS",
    "Agent",
    "DemandModel",
    "Economy",
    "EconomyConfig",
    "Episode",
    "EpisodeResult",
    "HeuristicRoaster",
    "JsonlLog",
    "Negotiator",
    "OpenAIChatAgent",
    "PassiveAgent",
    "ReactiveTrader",
    "ReferenceFarmer",
    "ReferenceRetailer",
    "ReplayClient",
    "ScriptedAgent",
    "ToolError",
    "openai_tools",
    "passive_net_income",
    "read_jsonl",
    "reference_agents",
    "run_episode",
    "shop_sales",
    "validate_call",
]
