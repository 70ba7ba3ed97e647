"""An AWM scenario inside the sandbox worker: its database built from schema and seed rows, its FastAPI application
imported against that database, each endpoint a tool (from the application's OpenAPI document, as AWM's own MCP
exposure makes them), and every call dispatched in process over ASGI — no socket.

This module imports and runs another author's code: only :mod:`occubench.awm.service` in a worker uses it.

Instances share the application: the worker serves one request at a time, so before a call the application's
engines and session factories (found by type, whatever the code named them) are pointed at that instance's copy of
the database.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import sqlite3
import sys
import types
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from occubench.core.blame import exhausted
from occubench.core.tools import clip, describe, tool_error
from occubench.errors import ConfigError, WorldError

#: How deep a schema's references are resolved into tool parameters; deeper (or circular) ones become ``{}``.
MAX_REF_DEPTH = 8


def statements(value: object) -> list[str]:
    """SQL statements as the published data gives them: a list, its JSON text, or its Python-literal text."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text)  # literals only: nothing in the text runs
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def build_database(path: Path, schema: dict[str, Any], seed: dict[str, Any] | None) -> list[str]:
    """A fresh SQLite database at ``path``: the schema's tables and indexes, then the seed rows; the statements
    that failed, with SQLite's reason (a seed row that breaks a constraint is left out, not fatal)."""
    problems: list[str] = []
    with sqlite3.connect(path) as connection:
        tables, rows = _list(schema.get("tables")), _list((seed or {}).get("tables"))
        script = [table.get("ddl") for table in tables if isinstance(table, dict)]
        script += [index for table in tables if isinstance(table, dict) for index in statements(table.get("indexes"))]
        script += [row for table in rows if isinstance(table, dict)
                   for row in statements(table.get("insert_statements"))]
        for statement in script:
            if not isinstance(statement, str):
                continue
            try:
                connection.execute(statement)
            except sqlite3.Error as exc:
                problems.append(f"{clip(statement, 120)}: {exc}")
    return problems


def _resolve(schema: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """``schema`` with its ``#/components/schemas/...`` references written out (a tool's parameters stand alone)."""
    if isinstance(schema, list):
        return [_resolve(item, components, depth) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str):
        target = components.get(reference.rsplit("/", 1)[-1])
        return {} if depth >= MAX_REF_DEPTH or not isinstance(target, dict) else _resolve(target, components, depth + 1)
    return {key: _resolve(value, components, depth) for key, value in schema.items()}


def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each operation of an OpenAPI document as a tool: its name (the operation id), description, JSON-schema
    parameters (path, query and the JSON body's fields in one object) and how to send it."""
    components = document.get("components", {}).get("schemas", {})
    found: dict[str, dict[str, Any]] = {}
    for path, methods in document.get("paths", {}).items():
        for method, operation in methods.items():
            name = operation.get("operationId")
            if not isinstance(name, str):
                continue
            properties: dict[str, Any] = {}
            required: list[str] = []
            where: dict[str, str] = {}
            for parameter in operation.get("parameters", []):
                where[parameter["name"]] = parameter.get("in", "query")
                properties[parameter["name"]] = {**_resolve(parameter.get("schema", {}), components),
                                                 **({"description": parameter["description"]}
                                                    if parameter.get("description") else {})}
                if parameter.get("required"):
                    required.append(parameter["name"])
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                body = _resolve(body, components)
                for field, field_schema in body.get("properties", {}).items():
                    properties[field], where[field] = field_schema, "body"
                required += [field for field in body.get("required", []) if field in properties]
            found[name] = {"description": operation.get("summary") or operation.get("description") or name,
                           "parameters": {"type": "object", "properties": properties, "required": required},
                           "method": method.upper(), "path": path, "where": where}
    return found


_WARM_UP = """
from datetime import datetime
from typing import Dict, List, Optional
from fastapi import Body, Depends, FastAPI, Path, Query
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Boolean, Column, DateTime, Float, ForeignKey, Integer, String, Text, create_engine
from sqlalchemy.orm import Session, declarative_base, relationship, sessionmaker

engine = create_engine("sqlite://")
SessionLocal = sessionmaker(bind=engine)
Base = declarative_base()

class Owner(Base):
    __tablename__ = "owners"
    id = Column(Integer, primary_key=True)
    name = Column(String(80), nullable=False)
    items = relationship("Item", back_populates="owner")

class Item(Base):
    __tablename__ = "items"
    id = Column(Integer, primary_key=True)
    owner_id = Column(Integer, ForeignKey("owners.id"))
    price, done, note, at = Column(Float), Column(Boolean), Column(Text), Column(DateTime)
    owner = relationship("Owner", back_populates="items")

class ItemOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int = Field(..., description="id", example=1)
    price: Optional[float] = None
    tags: List[str] = []
    extra: Dict[str, str] = {}
    at: Optional[datetime] = None

class ItemIn(BaseModel):
    note: str = Field(..., min_length=1)

def db():
    yield SessionLocal()

app = FastAPI()

@app.get("/items/{item_id}", response_model=ItemOut, operation_id="get_item")
def get_item(item_id: int = Path(..., example=1), q: Optional[str] = Query(None, example="x"),
             session: Session = Depends(db)):
    return session.get(Item, item_id)

@app.post("/items", response_model=List[ItemOut])
def add_item(body: ItemIn = Body(...), limit: int = Query(10, ge=1)):
    return []

Base.metadata.create_all(engine)
app.openapi()
"""


def warm_up() -> None:
    """Take, once in a zygote, the first-use costs every application pays (the libraries' lazy imports and caches):
    a small application of the published ones' shape, built and described, never served (a request would start the
    thread pool that a fork cannot take along)."""
    module = sys.modules["awm_warm_up"] = types.ModuleType("awm_warm_up")  # where pydantic resolves annotations
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(_WARM_UP, "<awm warm-up>", "exec"), module.__dict__)
    finally:
        del sys.modules["awm_warm_up"]


class Application:
    """The scenario's application, imported once against the template database ``template``."""

    def __init__(self, code: str, filename: str, template: Path) -> None:
        import httpx  # the worker's imports: FastAPI's and SQLAlchemy's come with the application
        from sqlalchemy.engine import Engine
        from sqlalchemy.orm import sessionmaker

        os.environ["DATABASE_PATH"] = f"sqlite:///{template}"
        self.module = types.ModuleType("awm_application")
        sys.modules[self.module.__name__] = self.module  # pydantic resolves the models' annotations through it
        with warnings.catch_warnings():  # the libraries' deprecation notes on the data's code: nobody reads them
            warnings.simplefilter("ignore")
            exec(compile(code, filename, "exec"), self.module.__dict__)  # the worker exists to run it
        self.app: Any = self.module.__dict__.get("app")
        if self.app is None or not hasattr(self.app, "openapi"):
            raise ValueError("the application defines no FastAPI `app`")
        self.operations = operations(self.app.openapi())
        self._engines = [name for name, value in vars(self.module).items() if isinstance(value, Engine)]
        self._makers = [value for value in vars(self.module).values() if isinstance(value, sessionmaker)]
        self._loop = asyncio.new_event_loop()
        # An exception in an endpoint is raised here too (after its 500), for call() to tell whose fault it is.
        transport = httpx.ASGITransport(app=self.app)
        self._client = httpx.AsyncClient(transport=transport, base_url="http://awm")

    def use(self, engine: Any) -> None:
        """Point the application at an instance's database."""
        for name in self._engines:
            setattr(self.module, name, engine)
        for maker in self._makers:
            maker.configure(bind=engine)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        operation = self.operations.get(name)
        if operation is None:
            return tool_error("unknown_tool", f"no tool {name!r}")
        where = operation["where"]
        path = operation["path"]
        for key, value in arguments.items():
            if where.get(key) == "path":
                path = path.replace("{" + key + "}", quote(str(value), safe=""))
        query = {k: v for k, v in arguments.items() if where.get(k, "query") == "query"}
        body = {k: v for k, v in arguments.items() if where.get(k) == "body"}
        try:
            response = self._loop.run_until_complete(self._client.request(
                operation["method"], path, params=query, json=body if operation["method"] != "GET" and body else None))
        except Exception as exc:  # an endpoint's exception: a server's 500, unless the world ran out of something
            if (resource := exhausted(exc)) is not None:
                raise WorldError(f"{name}: the application ran out of {resource}: {type(exc).__name__}: "
                                 f"{describe(exc)}") from exc
            return tool_error("tool_failed", "HTTP 500: Internal Server Error")
        try:
            answer = response.json()
        except ValueError:
            answer = response.text
        if response.status_code < 400:
            return answer if isinstance(answer, dict) else {"result": answer}
        detail = answer.get("detail", answer) if isinstance(answer, dict) else answer
        message = clip(f"HTTP {response.status_code}: {detail}")
        if response.status_code in (400, 422):
            return tool_error("invalid_arguments", message)
        return tool_error("tool_failed" if response.status_code >= 500 else "tool_error", message)


#: The function each kind of published verifier defines, and whether it takes the agent's final answer.
VERIFIER_FUNCTIONS = {"pure": ("verify_task_completion", True), "code_augmented": ("verify_task", False)}


def run_verifier(code: str, mode: str, initial: Path, final: Path, answer: str) -> dict[str, Any]:
    """What a task's verifier says of the episode: its code compiled and its function called on the initial and
    final databases (and, for a pure-code verifier, the final answer). A :class:`ConfigError` (the data's defect)
    when it does not compile or defines no such function; whatever else it raises is the caller's to report."""
    name, takes_answer = VERIFIER_FUNCTIONS[mode]
    namespace: dict[str, Any] = {"__name__": "awm_verifier"}
    try:
        exec(compile(code, f"<{mode} verifier>", "exec"), namespace)  # the worker exists to run it
    except SyntaxError as exc:
        raise ConfigError(f"the {mode} verifier does not compile: {exc}") from None
    function = namespace.get(name)
    if not callable(function):
        raise ConfigError(f"the {mode} verifier defines no {name}()")
    arguments = (str(initial), str(final), answer) if takes_answer else (str(initial), str(final))
    result = function(*arguments)
    return result if isinstance(result, dict) else {"result": result}
