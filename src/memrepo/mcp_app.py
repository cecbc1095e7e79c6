"""The ``MCPServer`` around :class:`memrepo.mcp_server.AgentTools` (imports the mcp SDK and pydantic).

No ``from __future__ import annotations`` here on purpose: the SDK reads the tool functions'
annotations (``Annotated[..., Field(...)]``) to build each tool's input schema.
"""
import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from .mcp_server import (
    INSTRUCTIONS,
    MEMORY_DESCRIPTION,
    RECALL_DESCRIPTION,
    SKILL_MANAGE_DESCRIPTION,
    SKILL_VIEW_DESCRIPTION,
    SKILLS_LIST_DESCRIPTION,
    AgentTools,
)

Source = Annotated[Literal["conversation", "tool", "web", "file", "mcp"],
                   Field(description="where the content came from (tool/web/file/mcp: held for stricter review)")]
Target = Literal["memory", "user", "knowledge"]


class Operation(BaseModel):
    """One item of the memory tool's ``operations`` list."""

    action: Literal["add", "replace", "remove"]
    content: str | None = Field(default=None, description="Entry content for add/replace.")
    old_text: str | None = Field(default=None, description="Substring identifying the entry for replace/remove.")


def _dump(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)


def build_server(tools: AgentTools) -> MCPServer:
    """An ``MCPServer`` named memrepo whose five tools call ``tools``."""
    server: MCPServer = MCPServer(name="memrepo", instructions=INSTRUCTIONS, log_level="WARNING")

    def memory(action: Annotated[Literal["add", "replace", "remove"] | None,
                                 Field(description="The action to perform (omit when using 'operations').")] = None,
               target: Annotated[Target, Field(description="Which store: 'memory' (your notes), 'user' (user profile), 'knowledge' (recall only).")] = "memory",
               content: Annotated[str | None, Field(description="The entry content. Required for 'add' and 'replace'.")] = None,
               old_text: Annotated[str | None, Field(description="Short unique substring identifying the entry to replace or remove.")] = None,
               source: Source = "conversation",
               operations: Annotated[list[Operation] | None,
                                     Field(description="Several {action, content?, old_text?} applied all or nothing; "
                                                       "the limit is checked on the final result.")] = None) -> str:
        ops = [op.model_dump() for op in operations] if operations else None
        return _dump(tools.memory(action, target, content, old_text, source, ops))

    def memory_recall(query: Annotated[str, Field(description="What to look for.")],
                      k: Annotated[int, Field(description="How many results (1-20).", ge=1, le=20)] = 5,
                      target: Annotated[Target | None, Field(description="Only this target.")] = None) -> str:
        return _dump(tools.memory_recall(query, k, target))

    def skills_list(category: Annotated[str | None, Field(description="Only this category.")] = None) -> str:
        return _dump(tools.skills_list(category))

    def skill_view(name: Annotated[str, Field(description="The skill's name.")],
                   file_path: Annotated[str | None, Field(description="A file inside the skill, e.g. references/api.md.")] = None) -> str:
        return _dump(tools.skill_view(name, file_path))

    def skill_manage(action: Annotated[Literal["create", "patch", "edit", "delete", "write_file", "remove_file"],
                                       Field(description="The action to perform.")],
                     name: Annotated[str, Field(description="Skill name (lowercase, hyphens).")],
                     content: Annotated[str | None, Field(description="Full SKILL.md text (create, edit).")] = None,
                     category: Annotated[str | None, Field(description="Category folder (create).")] = None,
                     file_path: Annotated[str | None, Field(description="File inside the skill (patch, write_file, remove_file).")] = None,
                     file_content: Annotated[str | None, Field(description="File content (write_file).")] = None,
                     old_string: Annotated[str | None, Field(description="Text to find (patch).")] = None,
                     new_string: Annotated[str | None, Field(description="Replacement text (patch).")] = None,
                     replace_all: Annotated[bool, Field(description="Replace every match (patch).")] = False,
                     source: Source = "conversation") -> str:
        return _dump(tools.skill_manage(action, name, content, category, file_path, file_content, old_string,
                                        new_string, replace_all, source))

    for fn, description in ((memory, MEMORY_DESCRIPTION), (memory_recall, RECALL_DESCRIPTION),
                            (skills_list, SKILLS_LIST_DESCRIPTION), (skill_view, SKILL_VIEW_DESCRIPTION),
                            (skill_manage, SKILL_MANAGE_DESCRIPTION)):
        server.add_tool(fn, description=description, structured_output=False)
    return server
