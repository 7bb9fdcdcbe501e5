"""The OpenAPI document of a session's tools, generated from the scenario.

Frameworks that build an agent's tools from an OpenAPI document (LangChain's
and LlamaIndex's OpenAPI toolkits, OpenAI's actions) can point at
``GET {http_url}/openapi.json``: one ``POST /tools/NAME`` operation per tool,
``operationId`` the tool's name, the request body the tool's arguments as a
JSON Schema (declared arguments only, their types from
``tool_argument_types``, the ones its effects use required), and the error
answers every call may get. OpenAPI 3.1, whose schemas are JSON Schema 2020-12.
"""

from __future__ import annotations

from typing import Any

from vae.tools.spec import ToolDef, ToolSet

_ERROR_REF = {"$ref": "#/components/schemas/Error"}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ERROR_REF}}}


def _operation(tool: ToolDef) -> dict[str, Any]:
    described = [f"{arg}: {text}" if text else arg for arg, text in tool.arguments.items()]
    summary = f"{tool.name}({', '.join(tool.arguments)})"
    return {
        "operationId": tool.name,
        "summary": summary,
        "description": "Arguments: " + "; ".join(described) if described else "No arguments.",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": tool.input_schema()}},
        },
        "responses": {
            "200": {
                "description": "The tool's result.",
                "content": {"application/json": {"schema": {}}},
            },
            "400": _error("The body is not a JSON object."),
            "404": _error("No record the call names (or an unknown tool)."),
            "413": _error("The body is larger than the backend accepts."),
            "422": _error("An argument the tool does not take, a missing one or a wrong type."),
            "default": {
                "description": "An answer the scenario chose (tool_responses).",
                "content": {"application/json": {"schema": {}}},
            },
        },
    }


def openapi_document(tools: ToolSet, base_url: str, title: str) -> dict[str, Any]:
    """The document served at ``/openapi.json``."""
    paths = {
        f"/tools/{name}": {"post": _operation(tool)} for name, tool in sorted(tools.tools.items())
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": "1",
            "description": "A session's tools, served by vae's tool backend for one session.",
        },
        "servers": [{"url": base_url}],
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {"type": "string"},
                        "status": {"type": "integer"},
                        "argument": {"type": "string"},
                    },
                }
            }
        },
    }
