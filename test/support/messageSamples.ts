// One hand-made frame per message variant the recordings lack, with every field the official
// SDK 0.3.330 declares for it (sdk.d.ts), optional ones included. Shared by the decoding and the
// compiled-guard tests.
const base = { session_id: "s-1", uuid: "u-1" }
const usage = { total_tokens: 1200, tool_uses: 3, duration_ms: 4500 }

export const messageSamples: ReadonlyArray<readonly [string, { readonly [key: string]: unknown }]> = [
  ["system/hook_started", {
    type: "system",
    subtype: "hook_started",
    hook_id: "h1",
    hook_name: "PreToolUse:Bash",
    hook_event: "PreToolUse",
    ...base
  }],
  ["system/hook_progress", {
    type: "system",
    subtype: "hook_progress",
    hook_id: "h1",
    hook_name: "PreToolUse:Bash",
    hook_event: "PreToolUse",
    stdout: "checking",
    stderr: "",
    output: "checking",
    ...base
  }],
  ["system/hook_response", {
    type: "system",
    subtype: "hook_response",
    hook_id: "h1",
    hook_name: "PreToolUse:Bash",
    hook_event: "PreToolUse",
    output: "ok",
    stdout: "ok",
    stderr: "",
    exit_code: 0,
    outcome: "success",
    ...base
  }],
  ["system/task_started", {
    type: "system",
    subtype: "task_started",
    task_id: "t1",
    run_id: "r1",
    tool_use_id: "toolu_1",
    description: "Review the diff",
    subagent_type: "general-purpose",
    is_backgrounded: false,
    spawn_depth: 1,
    parent_task_id: "t0",
    task_type: "local_agent",
    workflow_name: "spec",
    prompt: "Review it",
    skip_transcript: false,
    ambient: false,
    ...base
  }],
  ["system/task_progress", {
    type: "system",
    subtype: "task_progress",
    task_id: "t1",
    run_id: "r1",
    tool_use_id: "toolu_1",
    description: "Review the diff",
    subagent_type: "general-purpose",
    usage,
    last_tool_name: "Read",
    summary: "Reading the diff",
    ...base
  }],
  ["system/task_updated", {
    type: "system",
    subtype: "task_updated",
    task_id: "t1",
    run_id: "r1",
    patch: {
      status: "completed",
      description: "d",
      end_time: 1_700_000_000_000,
      total_paused_ms: 0,
      error: "e",
      is_backgrounded: true
    },
    ...base
  }],
  ["system/task_notification", {
    type: "system",
    subtype: "task_notification",
    task_id: "t1",
    run_id: "r1",
    tool_use_id: "toolu_1",
    status: "completed",
    reason: "worker_restart",
    output_file: "/tmp/t1.out",
    summary: "Found two bugs",
    usage,
    resource_links: [{
      uri: "file:///r.pdf",
      name: "r.pdf",
      title: "R",
      description: "d",
      mimeType: "application/pdf",
      size: 10,
      annotations: {}
    }],
    skip_transcript: false,
    ambient: false,
    ...base
  }],
  ["system/background_tasks_changed", {
    type: "system",
    subtype: "background_tasks_changed",
    tasks: [
      {
        task_id: "t1",
        run_id: "r1",
        task_type: "local_agent",
        subagent_type: "general-purpose",
        description: "d",
        parent_task_id: "t0",
        ambient: false
      },
      { task_id: "t2", task_type: "local_bash", description: "npm test" }
    ],
    ...base
  }],
  ["system/local_command_output", {
    type: "system",
    subtype: "local_command_output",
    content: "Total cost: $0.00",
    ...base
  }],
  ["system/files_persisted", {
    type: "system",
    subtype: "files_persisted",
    files: [{ filename: "a.txt", file_id: "file_1" }],
    failed: [{ filename: "b.txt", error: "too large" }],
    processed_at: "2026-01-01T00:00:00Z",
    ...base
  }],
  ["system/elicitation_complete", {
    type: "system",
    subtype: "elicitation_complete",
    mcp_server_name: "auth",
    elicitation_id: "e1",
    ...base
  }],
  ["system/notification", {
    type: "system",
    subtype: "notification",
    key: "k",
    text: "Usage at 80%",
    priority: "medium",
    color: "yellow",
    timeout_ms: 5000,
    ...base
  }],
  ["system/memory_recall", {
    type: "system",
    subtype: "memory_recall",
    mode: "select",
    memories: [{ path: "/home/u/.claude/memory/a.md", scope: "personal" }, {
      path: "<synthesis:/m>",
      scope: "team",
      content: "x"
    }],
    ...base
  }],
  ["system/plugin_install", {
    type: "system",
    subtype: "plugin_install",
    status: "failed",
    name: "market",
    error: "offline",
    ...base
  }],
  ["system/mirror_error", {
    type: "system",
    subtype: "mirror_error",
    error: "timeout",
    key: { projectKey: "p", sessionId: "s-1", subpath: "agent-1" },
    ...base
  }],
  ["system/awaiting_approval", {
    type: "system",
    subtype: "awaiting_approval",
    approval: {
      id: "a-1",
      projectKey: "-srv-app",
      sessionId: "s-1",
      cwd: "/srv/app",
      toolUseId: "toolu_1",
      toolName: "Write",
      input: { file_path: "/srv/app/out.txt", content: "hi" },
      createdAt: 1764115200000,
      expiresAt: 1764201600000,
      state: "pending"
    },
    ...base
  }],
  ["system/informational", {
    type: "system",
    subtype: "informational",
    content: "Hook failed",
    level: "warning",
    tool_use_id: "toolu_1",
    prevent_continuation: false,
    tag: "hook_callback_failed",
    ...base
  }],
  ["system/commands_changed", {
    type: "system",
    subtype: "commands_changed",
    commands: [{ name: "review", description: "Review", argumentHint: "<pr>", aliases: ["r"], builtin: false }],
    ...base
  }],
  ["system/session_title_changed", {
    type: "system",
    subtype: "session_title_changed",
    title: "Release notes",
    ...base
  }],
  ["system/control_request_progress", {
    type: "system",
    subtype: "control_request_progress",
    request_id: "req_1",
    status: "api_retry",
    attempt: 1,
    max_retries: 10,
    retry_delay_ms: 500,
    error_status: null,
    ...base
  }],
  ["system/model_refusal_fallback", {
    type: "system",
    subtype: "model_refusal_fallback",
    trigger: "refusal",
    direction: "retry",
    scope: "session",
    original_model: "claude-opus",
    fallback_model: "claude-sonnet",
    request_id: "req_011",
    api_refusal_category: null,
    api_refusal_explanation: null,
    retracted_message_uuids: ["a-1", "a-2"],
    refused_user_message_uuid: "user-1",
    content: "Switched to claude-sonnet",
    ...base
  }],
  ["system/model_refusal_no_fallback", {
    type: "system",
    subtype: "model_refusal_no_fallback",
    original_model: "claude-opus",
    request_id: null,
    api_refusal_category: "cyber",
    api_refusal_explanation: "Declined.",
    refused_user_message_uuid: null,
    content: "The model declined",
    ...base
  }],
  ["system/worker_shutting_down", { type: "system", subtype: "worker_shutting_down", reason: "host_exit", ...base }],
  ["system/session_writes_lost", {
    type: "system",
    subtype: "session_writes_lost",
    error_code: "ENOSPC",
    lost: ["transcript", "global_config"],
    transcript_session_ids: ["s-1"],
    ...base
  }],
  ["conversation_reset", {
    type: "conversation_reset",
    new_conversation_id: "c-2",
    trigger: "clear",
    user_message_uuid: "user-9",
    timestamp: "2026-01-01T00:00:00Z",
    ...base
  }],
  ["active_goal", {
    type: "active_goal",
    value: {
      condition: "tests pass",
      iterations: 2,
      set_at: 1_700_000_000_000,
      tokens_at_start: 1000,
      last_reason: "still failing"
    },
    ...base
  }],
  ["active_goal", { type: "active_goal", value: null, ...base }]
]
