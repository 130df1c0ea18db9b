defmodule LemonMCP.Client.Delegates do
  @moduledoc false
  # The transport-specific client modules (HTTP, SSE) are LemonMCP.Client with
  # another transport: `use LemonMCP.Client.Delegates, transport: :sse`
  # defines start_link/1 and child_spec/1 for that transport and delegates
  # every other function to LemonMCP.Client, so the API cannot drift.

  @functions [
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
  ]

  @doc false
  def functions, do: @functions

  defmacro __using__(opts) do
    transport = Keyword.fetch!(opts, :transport)

    quote bind_quoted: [transport: transport] do
      @doc """
      Starts a client over this module's transport (`#{inspect(transport)}`),
      linked to the caller. Takes the options of `LemonMCP.Client.start_link/1`
      (with `url:` and `headers:` in place of `command:`); the client connects
      in the background: `LemonMCP.Client.await_ready/2` waits for it.
      """
      @spec start_link(keyword()) :: {:ok, pid()} | {:error, term()}
      def start_link(opts), do: LemonMCP.Client.start(unquote(transport), opts)

      @doc false
      def child_spec(opts) do
        %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [opts]}, restart: :transient}
      end

      for {name, arity} <- LemonMCP.Client.Delegates.functions() do
        args = Macro.generate_arguments(arity, __MODULE__)
        @doc "See `LemonMCP.Client.#{name}/#{arity}`."
        def unquote(name)(unquote_splicing(args)), do: LemonMCP.Client.unquote(name)(unquote_splicing(args))
      end
    end
  end
end
