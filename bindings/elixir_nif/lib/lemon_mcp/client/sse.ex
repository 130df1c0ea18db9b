defmodule LemonMCP.Client.SSE do
  @moduledoc """
  An MCP client over the legacy HTTP+SSE transport (2024-11-05), with the API of `LemonMCP.Client`.

      {:ok, c} = LemonMCP.Client.SSE.start_link(url: "https://example.com/sse",
                                                headers: [{"x-api-key", "..."}])

  Options: `:url` (required: the SSE stream), `:headers` (a list of `{name, value}` or a
  map), and the options every client has (`:client_name`,
  `:client_version`, `:capabilities`, `:timeout_ms`, `:ready_timeout_ms`,
  `:subscriber`, `:name`, ...). As in the seed, `start_link/1` returns once the handshake is done (bounded by `:timeout`), and fails with its error.

  It needs a library built with the legacy SSE transport
  (`"sse"` in `LemonMCP.features()["transports"]`); otherwise
  `start_link/1` returns `{:error, {:unsupported, message}}`. The legacy
  transport has no OAuth; OAuth options give `{:error, {:unsupported, msg}}`.

  Every other function is `LemonMCP.Client`'s, on the pid this returns.
  """

  @spec start_link(keyword()) :: {:ok, pid()} | {:error, term()}
  def start_link(opts), do: LemonMCP.Client.start(:sse, opts)

  @doc false
  def child_spec(opts) do
    %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [opts]}, restart: :transient}
  end

  for {name, arity} <- [
        state: 1,
        state: 2,
        await_ready: 1,
        await_ready: 2,
        close: 1,
        close: 2,
        stop: 1,
        subscribe: 1,
        subscribe: 2,
        subscribe: 3,
        unsubscribe: 1,
        unsubscribe: 2,
        server_info: 1,
        server_info: 2,
        server_capabilities: 1,
        server_capabilities: 2,
        initialize_result: 1,
        initialize_result: 2,
        list_tools: 1,
        list_tools: 2,
        call_tool: 2,
        call_tool: 3,
        call_tool: 4,
        call_tool_result: 2,
        call_tool_result: 3,
        call_tool_result: 4,
        list_resources: 1,
        list_resources: 2,
        list_resource_templates: 1,
        list_resource_templates: 2,
        read_resource: 2,
        read_resource: 3,
        list_prompts: 1,
        list_prompts: 2,
        get_prompt: 2,
        get_prompt: 3,
        get_prompt: 4,
        complete: 2,
        complete: 3,
        ping: 1,
        ping: 2,
        request: 2,
        request: 3,
        request: 4,
        notify: 2,
        notify: 3
      ] do
    args = Macro.generate_arguments(arity, __MODULE__)
    @doc "See `LemonMCP.Client.#{name}/#{arity}`."
    def unquote(name)(unquote_splicing(args)), do: LemonMCP.Client.unquote(name)(unquote_splicing(args))
  end
end
