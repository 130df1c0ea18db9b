defmodule LemonMCP.Client do
  @moduledoc """
  An MCP client over stdio: the server runs as a subprocess.

  The API and result shapes are those of the Elixir `lemon_mcp` library
  this product grew from, so a host can switch without rewriting its calls:

      {:ok, c} = LemonMCP.Client.start_link(command: "my-server", args: ["--flag"])
      :ok = LemonMCP.Client.await_ready(c, 5_000)
      {:ok, tools} = LemonMCP.Client.list_tools(c)
      {:ok, [%{"type" => "text", "text" => "hi"}]} =
        LemonMCP.Client.call_tool(c, "echo", %{text: "hi"})

  The client is a process (a GenServer) that owns one client of
  `liblemonmcp.so`. It never blocks on the library: a request starts with a
  NIF call that returns at once, and its result arrives as a message sent
  from a library thread. Many processes may call one client concurrently.
  When the client process exits for any reason, the library closes the
  connection and reaps the subprocess (SIGTERM to its process group, then
  SIGKILL).

  ## Start options

    * `:command` (required) — the executable, looked up on `PATH` when it
      has no `/`. Started directly, without a shell.
    * `:args` — its arguments (`[]`)
    * `:env` — extra environment variables (keyword list or map)
    * `:env_inherit` — `:minimal` (the default: `PATH`, `HOME`, `USER`,
      `LANG`, ... only) or `:all` (the whole environment of the VM, as the
      `lemon_mcp` library this one replaces passed)
    * `:cwd`, `:stderr` (`:capture` | `:merge` | `:discard`)
    * `:client_name`, `:client_version` — `clientInfo` (`"lemon-mcp"`,
      the library's version)
    * `:capabilities` — static capabilities; only `"experimental"` is sent
      as given. Roots, sampling and elicitation are advertised exactly when
      a handler can answer them: `:roots`, `:sampling_handler` /
      `:sampling_policy`, `:elicitation_handler`.
    * `:sampling_handler`, `:sampling_policy` — see `LemonMCP.Sampling`
    * `:roots` — a list of `%{"uri" => ..., "name" => ...}` maps, or a
      function returning one
    * `:elicitation_handler` — `params -> {:ok, result} | {:error, reason}`
    * `:timeout_ms` — the deadline of each request (30 000)
    * `:ready_timeout_ms` — the deadline of the handshake (30 000)
    * `:protocol_mode` — `"auto"` (the default), `"legacy"` or `"modern"`
      (protocol.mode);
      `:protocol_tasks` — `true` to take part in the tasks extension
      (`io.modelcontextprotocol/tasks`: a tool call the server runs as a
      task is still one call, answered when the task ends)
    * `:subscriber` — a pid that receives events (see `subscribe/3`)
    * `:name` — a name to register the client process under

  `start_link/1` returns as soon as the subprocess is started; the
  handshake goes on in the background (`state/1` is `:initializing`, then
  `:ready`). Wait for it with `await_ready/2`. A start that fails returns
  `{:error, reason}` without an exit signal: `{:invalid_command, msg}` for
  an empty, non-string or unknown command, `{:spawn_failed, msg}`,
  `{:invalid_option, msg}`, `{:unsupported, msg}`.

  ## Errors

  Every request returns `{:error, reason}` on failure:
  `{:not_ready, state}`, `:timeout`, `:connection_closed`,
  `{:rpc_error, %{code:, message:, data:}}`, `{:tool_error, content}`
  (`call_tool/4` only), `{:unsupported, msg}` (the server did not declare
  the capability), `{:encode_failed, msg}` (arguments that are not JSON:
  tuples, pids, structs, non-UTF-8 binaries), or another tuple from
  `LemonMCP.Error`.

  ## Events

  A subscriber receives `{:lemon_mcp, client_pid, kind, payload}` messages,
  kind being `:ready`, `:failed`, `:closed`, `:notification` (every server
  notification, e.g. `notifications/tools/list_changed`), `:progress`,
  `:sampling_denied`, and `:log` when subscribed to it (or to `:all`).
  """

  alias LemonMCP.Client.{Config, Server}

  @typedoc "A client: its pid or registered name."
  @type client :: GenServer.server()
  @type reason :: term()
  @typedoc "A caller timeout in ms, or options `[timeout:, meta:, progress:]`."
  @type call_opts :: timeout() | keyword()

  @default_timeout 30_000

  @doc "A child specification, so a host can supervise clients."
  def child_spec(opts) do
    %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [opts]}, restart: :transient}
  end

  @doc "Starts a client of a stdio server. See the module documentation."
  @spec start_link(keyword()) :: {:ok, pid()} | {:error, reason()}
  def start_link(opts), do: start(:stdio, opts)

  @doc false
  # stdio returns once the subprocess runs; HTTP and SSE, as in the seed,
  # once the handshake is done (bounded by the :timeout option, and by
  # :ready_timeout_ms in the library), failing the start if it fails.
  def start(kind, opts) do
    with {:ok, config, callbacks} <- Config.build(kind, opts),
         {:ok, pid} <- Server.start_link(config, callbacks, opts) do
      if kind == :stdio do
        {:ok, pid}
      else
        case await_ready(pid, Keyword.get(opts, :timeout, :infinity)) do
          :ok ->
            {:ok, pid}

          {:error, reason} ->
            Process.unlink(pid)
            stop(pid)
            {:error, reason}
        end
      end
    end
  end

  # ------------------------------------------------------------ lifecycle

  @doc "The client's state: `:initializing`, `:ready`, `:closing`, `:disconnected` or `:failed`."
  @spec state(client(), timeout()) :: atom()
  def state(client, timeout \\ 5_000), do: GenServer.call(client, :state, timeout)

  @doc """
  Waits until the client is ready: `:ok`, or `{:error, reason}` when the
  handshake failed (`{:rpc_error, ...}` for an initialize error,
  `:connection_closed` when the server exited, `:timeout`).
  """
  @spec await_ready(client(), timeout()) :: :ok | {:error, reason()}
  def await_ready(client, timeout \\ @default_timeout) do
    GenServer.call(client, {:await_ready, timeout}, outer(timeout))
  end

  @doc """
  Closes the connection: pending requests fail with `:connection_closed`,
  the server's stdin is closed, and it is stopped and reaped. The client
  process stays alive in state `:disconnected`. Returns `:ok` (teardown
  that outlasts `timeout` goes on in the background).
  """
  @spec close(client(), timeout()) :: :ok
  def close(client, timeout \\ 5_000) do
    lib_timeout = if timeout == :infinity, do: -1, else: max(timeout - 250, 0)
    GenServer.call(client, {:close, lib_timeout}, outer(timeout))
  end

  @doc "Stops the client process (the library frees the client and reaps the server)."
  @spec stop(client()) :: :ok
  def stop(client), do: GenServer.stop(client, :normal)

  @doc """
  Sends events to `pid` as `{:lemon_mcp, client_pid, kind, payload}`.
  `kinds` is a list of event kinds, or `:all` (logs included).
  """
  @spec subscribe(client(), pid(), [atom()] | :all) :: :ok
  def subscribe(client, pid \\ self(), kinds \\ [:ready, :failed, :closed, :notification, :progress, :sampling_denied]) do
    GenServer.call(client, {:subscribe, pid, kinds})
  end

  @doc "Stops sending events to `pid`."
  @spec unsubscribe(client(), pid()) :: :ok
  def unsubscribe(client, pid \\ self()), do: GenServer.call(client, {:unsubscribe, pid})

  # ---------------------------------------------------------- server info

  @doc "`{:ok, %{name:, version:}}` of the server, once ready; else `{:error, :not_connected}`."
  @spec server_info(client(), timeout()) :: {:ok, %{name: term(), version: term()}} | {:error, :not_connected}
  def server_info(client, timeout \\ 5_000) do
    with {:ok, info} <- GenServer.call(client, :server_info, timeout) do
      si = info["serverInfo"] || %{}
      {:ok, %{name: si["name"], version: si["version"]}}
    end
  end

  @doc "The server's capabilities map (`%{}` if it declared none), once ready."
  @spec server_capabilities(client(), timeout()) :: {:ok, map()} | {:error, :not_connected}
  def server_capabilities(client, timeout \\ 5_000) do
    with {:ok, info} <- GenServer.call(client, :server_info, timeout) do
      {:ok, info["capabilities"] || %{}}
    end
  end

  @doc """
  Everything the handshake learned: `"protocolVersion"`, `"capabilities"`,
  `"serverInfo"`, `"instructions"` (if any) and `"transport"`.
  """
  @spec initialize_result(client(), timeout()) :: {:ok, map()} | {:error, :not_connected}
  def initialize_result(client, timeout \\ 5_000), do: GenServer.call(client, :server_info, timeout)

  # ------------------------------------------------------------ requests

  @doc "Every tool (all pages): `{:ok, [tool_map]}` with string keys."
  @spec list_tools(client(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def list_tools(client, opts \\ @default_timeout), do: list(client, "tools/list", "tools", opts)

  @doc """
  Calls a tool: `{:ok, content}` (the result's `content` list), or
  `{:error, {:tool_error, content}}` when the result has `isError: true`.
  """
  @spec call_tool(client(), String.t(), map(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def call_tool(client, name, args \\ %{}, opts \\ @default_timeout) do
    case call_tool_result(client, name, args, opts) do
      {:ok, %{"isError" => true} = r} -> {:error, {:tool_error, r["content"] || []}}
      {:ok, r} -> {:ok, r["content"] || []}
      error -> error
    end
  end

  @doc """
  Calls a tool and returns the whole result: `"content"`,
  `"structuredContent"`, `"isError"`, `"_meta"`. An `isError` result is
  `{:ok, result}` here.
  """
  @spec call_tool_result(client(), String.t(), map(), call_opts()) :: {:ok, map()} | {:error, reason()}
  def call_tool_result(client, name, args \\ %{}, opts \\ @default_timeout) do
    request(client, "tools/call", %{"name" => name, "arguments" => args || %{}}, opts)
  end

  @doc "Every resource (all pages): `{:ok, [resource_map]}`."
  @spec list_resources(client(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def list_resources(client, opts \\ @default_timeout), do: list(client, "resources/list", "resources", opts)

  @doc "Every resource template (all pages): `{:ok, [template_map]}`."
  @spec list_resource_templates(client(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def list_resource_templates(client, opts \\ @default_timeout),
    do: list(client, "resources/templates/list", "resourceTemplates", opts)

  @doc "Reads a resource: `{:ok, contents}` (the result's `contents` list)."
  @spec read_resource(client(), String.t(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def read_resource(client, uri, opts \\ @default_timeout) do
    with {:ok, r} <- request(client, "resources/read", %{"uri" => uri}, opts), do: {:ok, r["contents"] || []}
  end

  @doc """
  Subscribes to a resource's updates, in either protocol era (a 2026-07-28
  server is asked through `subscriptions/listen`): `:ok`; updates reach
  subscribers as `:notification` events for `notifications/resources/updated`.
  """
  @spec subscribe_resource(client(), String.t(), call_opts()) :: :ok | {:error, reason()}
  def subscribe_resource(client, uri, opts \\ @default_timeout) do
    with {:ok, _} <- request(client, "resources/subscribe", %{"uri" => uri}, opts), do: :ok
  end

  @doc "Ends a resource subscription made with `subscribe_resource/3`: `:ok`."
  @spec unsubscribe_resource(client(), String.t(), call_opts()) :: :ok | {:error, reason()}
  def unsubscribe_resource(client, uri, opts \\ @default_timeout) do
    with {:ok, _} <- request(client, "resources/unsubscribe", %{"uri" => uri}, opts), do: :ok
  end

  @doc "Every prompt (all pages): `{:ok, [prompt_map]}`."
  @spec list_prompts(client(), call_opts()) :: {:ok, [map()]} | {:error, reason()}
  def list_prompts(client, opts \\ @default_timeout), do: list(client, "prompts/list", "prompts", opts)

  @doc "Gets a prompt: `{:ok, %{description: text | nil, messages: [message_map]}}`."
  @spec get_prompt(client(), String.t(), map(), call_opts()) ::
          {:ok, %{description: String.t() | nil, messages: [map()]}} | {:error, reason()}
  def get_prompt(client, name, args \\ %{}, opts \\ @default_timeout) do
    params = %{"name" => name, "arguments" => stringify(args || %{})}

    with {:ok, r} <- request(client, "prompts/get", params, opts) do
      {:ok, %{description: r["description"], messages: r["messages"] || []}}
    end
  end

  @doc """
  Asks for completions (`completion/complete`): `params` holds `"ref"` and
  `"argument"` (and `"context"`), e.g.
  `%{ref: %{type: "ref/prompt", name: "greet"}, argument: %{name: "name", value: "a"}}`.
  Returns `{:ok, completion}` (`"values"`, `"total"`, `"hasMore"`).
  """
  @spec complete(client(), map(), call_opts()) :: {:ok, map()} | {:error, reason()}
  def complete(client, params, opts \\ @default_timeout) do
    with {:ok, r} <- request(client, "completion/complete", params, opts), do: {:ok, r["completion"] || %{}}
  end

  @doc "Pings the server: `:ok`."
  @spec ping(client(), call_opts()) :: :ok | {:error, reason()}
  def ping(client, opts \\ @default_timeout) do
    with {:ok, _} <- request(client, "ping", nil, opts), do: :ok
  end

  @doc """
  Sends any request and returns its raw result map. `opts` is a timeout or
  a keyword list: `:timeout`, `:all_pages` (for list methods), `:meta`
  (merged into `params._meta`), `:progress` (ask for progress events,
  delivered to subscribers), `:wait_ready` (queue until ready instead of
  `{:not_ready, state}`), `:task` (a 2025-11-25 `tools/call` of a tool whose
  `execution.taskSupport` is `"optional"` runs as a task; a `"required"`
  one always does, and either way the call completes once, with the task's
  result), and `:trace`, `:no_cache`, `:verify` (`resources/read`),
  `:reset_timeout_on_progress`, `:max_total_ms`, `:fail_if_restarting`
  (docs/call-options.md).
  """
  @spec request(client(), String.t(), map() | nil, call_opts()) :: {:ok, term()} | {:error, reason()}
  def request(client, method, params \\ nil, opts \\ @default_timeout) do
    opts = normalize(opts)
    LemonMCP.Telemetry.span(client, method, params, &do_request(client, method, params, opts, &1))
  end

  # traced: the reply carries the call's telemetry record, for the span.
  defp do_request(client, method, params, opts, traced) do
    message = if traced, do: {:call, method, params, opts, :recorded}, else: {:call, method, params, opts}

    case direct(client) do
      {pid, res, timeout_ms} ->
        owner = if traced, do: pid

        case Server.direct_call(res, timeout_ms, method, params, opts, outer(Keyword.get(opts, :timeout)), owner) do
          :stale ->
            # The client process is gone (or was replaced): forget it and
            # go through the process, which exits like any GenServer.call.
            forget_direct(pid)
            GenServer.call(client, message, outer(Keyword.get(opts, :timeout)))

          reply ->
            reply
        end

      nil ->
        GenServer.call(client, message, outer(Keyword.get(opts, :timeout)))
    end
  end

  @doc """
  Starts a request without waiting: returns a request id whose reply is
  collected with `await_response/2`. A process may have any number
  outstanding. The reply is the raw result, as `request/4` returns it.
  """
  @spec async_request(client(), String.t(), map() | nil, call_opts()) :: term()
  def async_request(client, method, params \\ nil, opts \\ @default_timeout) do
    :gen_server.send_request(client, {:call, method, params, normalize(opts)})
  end

  @doc """
  Waits for the reply of `async_request/4`: `{:ok, result}`,
  `{:error, reason}`, or `{:error, :timeout}` when `timeout` passes first
  (the request goes on; a late reply is discarded).
  """
  @spec await_response(term(), timeout()) :: {:ok, term()} | {:error, reason()}
  def await_response(request_id, timeout \\ @default_timeout + 5_000) do
    case :gen_server.receive_response(request_id, timeout) do
      {:reply, reply} -> reply
      :timeout -> {:error, :timeout}
      {:error, {reason, _server}} -> {:error, {:client_down, reason}}
    end
  end

  @doc "Sends a notification to the server, e.g. `notifications/roots/list_changed`."
  @spec notify(client(), String.t(), map() | nil) :: :ok | {:error, reason()}
  def notify(client, method, params \\ nil), do: GenServer.call(client, {:notify, method, params})

  # ------------------------------------------------------------- helpers

  # A request goes from the calling process straight to the library: the
  # NIF call returns at once and the completion message comes back to the
  # caller, so a call costs no hop through the client process (which keeps
  # ownership and lifecycle: it adopted the resource, and its exit frees
  # the client). The resource and the client's default timeout are asked
  # for once per caller and client, and kept in the caller's process
  # dictionary, for at most @direct_cache clients (a long-lived caller of
  # many short-lived clients must not accumulate them). A client on another
  # node is called through its process.
  @direct_cache 32

  defp direct(client) do
    case GenServer.whereis(client) do
      pid when is_pid(pid) and node(pid) == node() ->
        cache = Process.get({__MODULE__, :direct}, %{})

        case cache do
          %{^pid => {res, timeout_ms}} ->
            {pid, res, timeout_ms}

          _ ->
            {res, timeout_ms} = GenServer.call(pid, :direct_info)
            cache = if map_size(cache) >= @direct_cache, do: %{}, else: cache
            Process.put({__MODULE__, :direct}, Map.put(cache, pid, {res, timeout_ms}))
            {pid, res, timeout_ms}
        end

      _ ->
        nil
    end
  end

  defp forget_direct(pid) do
    Process.put({__MODULE__, :direct}, Map.delete(Process.get({__MODULE__, :direct}, %{}), pid))
  end

  defp list(client, method, key, opts) do
    with {:ok, r} <- request(client, method, nil, Keyword.put(normalize(opts), :all_pages, true)) do
      {:ok, r[key] || []}
    end
  end

  defp normalize(opts) when is_list(opts), do: opts
  defp normalize(timeout) when is_integer(timeout) or timeout == :infinity, do: [timeout: timeout]

  # The GenServer.call timeout outlasts the library's deadline, so a slow
  # server gives {:error, :timeout}, not an exit in the caller.
  defp outer(nil), do: @default_timeout + 5_000
  defp outer(:infinity), do: :infinity
  defp outer(ms) when is_integer(ms), do: ms + 5_000

  # Prompt arguments are strings by the protocol.
  defp stringify(args) do
    Map.new(args, fn {k, v} -> {to_string(k), if(is_binary(v), do: v, else: to_string(v))} end)
  end
end
