defmodule LemonMCP.Host do
  @moduledoc """
  Many named MCP servers behind one process, from an `mcpServers`
  configuration (the format of Claude Desktop, Claude Code, Cursor and VS
  Code files), a path to one or the decoded map:

      {:ok, h} = LemonMCP.Host.start_link("mcp.json")
      :ok = LemonMCP.Host.await_ready(h, 30_000)
      {:ok, tools} = LemonMCP.Host.list_tools(h)       # "files__read_file", ... with "server"
      {:ok, content} = LemonMCP.Host.call_tool(h, "files__read_file", %{path: "/tmp/x"})
      {:ok, %{"files" => %{"state" => "ready", "restarts" => 0}}} = LemonMCP.Host.servers(h)

  Each server is a command (`command`, `args`, `env`, `cwd`) or a URL
  (`url`, `headers`, `type`); `tools` (`%{"allow" => globs, "deny" =>
  globs}`) filters its tools, `enabled: false` keeps it configured but never
  started, `restart` tunes its supervision, and `${VAR}` / `${VAR:-default}`
  in any string come from the environment. An unknown or invalid field is an
  error naming it (`config.mcpServers.<name>.<field>`).

  The process owns one `lmcp_host` of `liblemonmcp.so`: the servers are
  connected in parallel and supervised by the library (a crashed server is
  restarted; the call in flight fails once with `:connection_closed`), tool
  lists are cached per server and refreshed on list_changed, and a server
  that fails never fails the others. When the process exits, every server is
  closed and reaped.

  Results and errors are those of `LemonMCP.Client` (`{:ok, content}`,
  `{:error, {:tool_error, content}}`, `{:error, :connection_closed}`,
  `{:error, {:rpc_error, ...}}`, ...; `LemonMCP.Error` maps the statuses),
  plus `{:error, {:not_found, message}}` for an unknown tool or server and
  `{:error, {:policy_denied, info}}` for a tool `tools.deny` excludes.

  ## Start options

    * `:tool_prefix` — `"always"` (`server__tool`, the default), `"on_collision"`
      or `"never"`; overrides the configuration's own value when given
    * `:subscriber` — a pid that receives `{:lemon_mcp_host, host_pid, kind, payload}`
      for every server event (`:ready`, `:restarting`, `:failed`, `:closed`,
      `:notification`, `:progress`, `:log`) and `:list_changed`; every
      payload has a `"server"` key
    * `:request_handler` — `fn kind, payload -> {:ok, result_map} | {:error, reason}`
      answering the servers' requests (`:sampling`, `:elicitation`, `:roots`);
      `payload["server"]` names the server. Runs in a task per request.
      Without it such requests are refused.
    * `:store` — `{load, save}`: the application's store, for a store
      `{"type": "app"}` such as `"pins": {"store": {"type": "app"}}`
      (`LemonMCP.Store` says what each returns). They answer the host's
      `store_load` and `store_save` in a task each, and must not wait for
      `pins/1` or `approve/5` of the same host.
    * `:name` — a name to register the process under
    * `:strict` — refuse the members of the configuration the host does not
      use instead of warning about each (`true`/`false`, default `false`)
    * `:inputs` — `%{"id" => "value"}`: the values of VS Code's `${input:id}`
      (the library never prompts)
    * `:workspace_folder` — `${workspaceFolder}` of a config file (default: the
      file's project directory)
    * `:start` — `"eager"` (every server starts now) or `"lazy"` (each on its
      first call or list); the configuration's own value otherwise

  A config file is read by the library: Claude Desktop, Claude Code, Cursor,
  VS Code (with comments, `servers`, `inputs`, `envFile`), Cline, Roo Code and
  Windsurf files load as they are, a malformed one is an error naming it, and
  each member the host ignores is logged once with `Logger.warning/1` (see
  `warnings/1`). `await_ready/2` logs a warning for each server that failed
  to start, with why (its exit status and last stderr lines).
  """

  use GenServer

  require Logger

  alias LemonMCP.{Error, NIF}

  @type host :: GenServer.server()
  @default_timeout 30_000

  @doc "A child specification, so an application can supervise its host."
  def child_spec({config, opts}) do
    %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [config, opts]}}
  end

  @doc """
  Starts the host and connects every enabled server (in parallel; the call
  returns once they are started). `config` is a map (atom or string keys),
  `{:json, text}` (a JSON text), or the path of a config file (a string:
  always a path, whatever its first character). Fails with
  `{:error, {:invalid_argument, message}}` for a bad configuration.
  """
  @spec start_link(map() | {:json, String.t()} | Path.t(), keyword()) :: GenServer.on_start()
  def start_link(config, opts \\ []) do
    gen_opts = if name = opts[:name], do: [name: name], else: []

    cond do
      Keyword.has_key?(opts, :pin_store) ->
        {:error,
         {:invalid_argument,
          ":pin_store is retired: write \"pins\" => %{\"store\" => %{\"type\" => \"app\"}} and give " <>
            ":store {load, save}, which answers store_load / store_save (docs/migrating.md)"}}

      opts[:store] != nil and not LemonMCP.Store.valid?(opts[:store]) ->
        {:error, {:invalid_argument, ":store: expected {load, save} (functions of 2 and 4 arguments)"}}

      is_binary(config) ->
        GenServer.start_link(__MODULE__, {{:file, config}, opts}, gen_opts)

      true ->
        start_map(config, opts, gen_opts)
    end
  end

  defp start_map(config, opts, gen_opts) do
    with {:ok, config} <- load(config) do
      config = if p = opts[:tool_prefix], do: Map.put(config, "tool_prefix", p), else: config
      config = if opts[:strict], do: Map.put(config, "strict", true), else: config
      config = if s = opts[:start], do: Map.put(config, "start", s), else: config
      GenServer.start_link(__MODULE__, {config, opts}, gen_opts)
    end
  end

  @doc "The members of the configuration the host ignored, one line each."
  @spec warnings(host()) :: [String.t()]
  def warnings(host), do: GenServer.call(host, :warnings)

  @doc "Stops the host: every server is closed and reaped."
  @spec stop(host()) :: :ok
  def stop(host), do: GenServer.stop(host, :normal)

  @doc """
  Waits until every enabled server is ready or has failed once: `:ok`, or
  `{:error, :timeout}` (the servers still connecting are in the message of
  the library's error, see `servers/1`), or, when every enabled server
  failed, the first one's failure (`{:error, :connection_closed}`, ...).
  """
  @spec await_ready(host(), timeout()) :: :ok | {:error, term()}
  def await_ready(host, timeout \\ @default_timeout) do
    ms = if timeout == :infinity, do: -1, else: timeout
    result = lib(host, &NIF.host_wait_ready(&1, ms))
    log_failed(host)
    result
  end

  @doc "Each server: `%{name => %{\"state\", \"restarts\", \"enabled\", \"era\", \"last_error\", ...}}`."
  @spec servers(host()) :: {:ok, map()} | {:error, term()}
  def servers(host), do: lib(host, &NIF.host_servers/1)

  @doc """
  With the host option `"pins"`, each server's pinned definitions:
  `%{server => %{"instructions" => entry, "tools" => %{name => entry},
  "prompts" => .., "resources" => ..}}`, each entry `%{"status", "hash",
  "pinned_hash"?, "findings", "held"?, "reason"?, "offered"?, "pinned"?}`
  (`lmcp_host_pins`; docs/host.md). Lists every ready server first, on a
  dirty scheduler. `{:error, {:invalid_state, _}}` without `"pins"`.
  """
  @spec pins(host()) :: {:ok, map()} | {:error, term()}
  def pins(host), do: pins_lib(host, &NIF.host_pins/1)

  @doc """
  Pins exactly `hash` for the definition `name` of `server`, as `pins/1` or
  a `definition_changed` event showed it; `kind` is `"tool"`, `"prompt"`,
  `"resource"` or `"instructions"` (then `name` is ignored). A hash the
  server no longer offers is refused (`lmcp_host_approve`: an approval is
  bound to what was shown).
  """
  @spec approve(host(), String.t(), String.t() | nil, String.t(), String.t()) :: :ok | {:error, term()}
  def approve(host, server, name, hash, kind \\ "tool")
      when is_binary(server) and (is_binary(name) or is_nil(name)) and is_binary(hash) and is_binary(kind) do
    approval = %{"server" => server, "kind" => kind, "hash" => hash}
    approval = if kind == "instructions", do: approval, else: Map.put(approval, "name", name || "")

    with {:ok, json} <- NIF.encode_json(approval) do
      pins_lib(host, &NIF.host_approve(&1, json))
    end
  end

  # For pins/1 and approve/5 LMCP_E_INVALID_STATE says the host has no pins,
  # or the hash shown is no longer offered: not a server's readiness.
  defp pins_lib(host, fun) do
    ref = GenServer.call(host, :ref)

    case fun.(ref) do
      :ok -> :ok
      {:ok, v} -> {:ok, v}
      {:error, -3, info} -> {:error, {:invalid_state, Error.message(info)}}
      {:error, status, info} -> {:error, Error.reason(status, info)}
    end
  end

  @doc "Every ready server's tools, named by `tool_prefix`, each with `\"server\"` and `\"original_name\"`."
  @spec list_tools(host()) :: {:ok, [map()]} | {:error, term()}
  def list_tools(host), do: list(host, "list_tools", "tools")

  @doc "Every ready server's prompts, each with `\"server\"`."
  @spec list_prompts(host()) :: {:ok, [map()]} | {:error, term()}
  def list_prompts(host), do: list(host, "list_prompts", "prompts")

  @doc "Every ready server's resources, each with `\"server\"`."
  @spec list_resources(host()) :: {:ok, [map()]} | {:error, term()}
  def list_resources(host), do: list(host, "list_resources", "resources")

  @doc """
  Ranks every ready server's tools against `query` (a few words: "create a
  github issue"): `{:ok, results}`, best first, each
  `%{"name" => host_name, "server" => server, "score" => float, "tool" => tool}`
  where `"name"` is what `call_tool/4` takes and `"tool"` the whole tool as
  `list_tools/1` gives it. `opts`: `:limit` (1..100, default 10), `:servers`
  (a list of server names). A query that is empty or only common words, or a
  bad option, is `{:error, {:invalid_argument, message}}`; an unknown server
  `{:error, {:not_found, message}}`.

  With the configuration's `"deferred_tools"`, `list_tools/1` lists only the
  tools always loaded and `"search_tools"`, which `call_tool/4` answers in
  the library with the matching tools' definitions.
  """
  @spec search_tools(host(), String.t(), keyword()) :: {:ok, [map()]} | {:error, term()}
  def search_tools(host, query, opts \\ []) when is_binary(query) do
    with {:ok, o} <- search_options(opts),
         {:ok, doc} <- query(host, "search_tools", Map.put(o || %{}, "query", query)) do
      {:ok, doc["results"] || []}
    end
  end

  # The values' ranges are the library's to check (it names a bad one); the
  # types are checked here, so that encoding them cannot fail.
  defp search_options(opts) do
    limit = opts[:limit]
    servers = opts[:servers]

    cond do
      limit != nil and not is_integer(limit) ->
        {:error, {:invalid_argument, "search_tools: :limit must be an integer"}}

      servers != nil and not (is_list(servers) and Enum.all?(servers, &is_binary/1)) ->
        {:error, {:invalid_argument, "search_tools: :servers must be a list of server names (strings)"}}

      true ->
        o = %{}
        o = if limit, do: Map.put(o, "limit", limit), else: o
        o = if servers, do: Map.put(o, "servers", servers), else: o
        {:ok, if(o == %{}, do: nil, else: o)}
    end
  end

  @doc """
  Calls a tool by the name `list_tools/1` gives it: `{:ok, content}`, or
  `{:error, {:tool_error, content}}` when the result has `isError: true`.
  `opts`: every option of `LemonMCP.Client.request/4` (`:timeout` in ms,
  `:meta`, `:progress`, `:task`, `:trace`, ...), and `:fail_if_restarting`
  (fail at once while the server restarts instead of waiting for it).
  """
  @spec call_tool(host(), String.t(), map(), keyword()) :: {:ok, [map()]} | {:error, term()}
  def call_tool(host, name, args \\ %{}, opts \\ []) do
    case call_tool_result(host, name, args, opts) do
      {:ok, %{"isError" => true} = r} -> {:error, {:tool_error, r["content"] || []}}
      {:ok, r} -> {:ok, r["content"] || []}
      error -> error
    end
  end

  @doc "Calls a tool and returns the whole result map."
  @spec call_tool_result(host(), String.t(), map(), keyword()) :: {:ok, map()} | {:error, term()}
  def call_tool_result(host, name, args \\ %{}, opts \\ []) do
    LemonMCP.Telemetry.span(host, "tools/call", fn -> tool_route(host, name) end, fn ->
      GenServer.call(host, {:call_tool, name, args || %{}, options(opts)}, outer(opts))
    end)
  end

  # The tool's own name and its server, for the :start event (the core's
  # record gives :stop the same); only asked for when events go out.
  defp tool_route(host, name) do
    case GenServer.call(host, {:route, name}) do
      {server, tool} -> {%{"name" => tool}, %{server: server}}
      nil -> {%{"name" => name}, %{}}
    end
  end

  @doc "Sends any request to one named server; returns its raw result."
  @spec request(host(), String.t(), String.t(), map() | nil, keyword()) :: {:ok, term()} | {:error, term()}
  def request(host, server, method, params \\ nil, opts \\ []) do
    LemonMCP.Telemetry.span(
      host,
      method,
      params,
      fn -> GenServer.call(host, {:call, server, method, params, options(opts)}, outer(opts)) end,
      %{server: server}
    )
  end

  @doc """
  Serves the host as one MCP server (docs/gateway.md): every front client
  that connects sees the host's tools, prompts and resources, and a
  server's sampling, elicitation and roots requests go to the front client
  whose call caused them. Returns `{:ok, served}` once serving, `served` a
  map with `:url` (the HTTP front's URL, else `nil`); the serving loop is
  the library's.

    * `http: "127.0.0.1:0"` — Streamable HTTP at `served.url`
      (`http://HOST:PORT/mcp`; port 0 picks a free one)
    * `fds: {in_fd, out_fd}` — stdio on two file descriptors (the library
      duplicates them)
    * `options: %{...}` — the library's serving options, as they are:
      `"auth"` (`%{"bearer_env" => "VAR"}` or `%{"jwks_url", "issuer",
      "audience"}`), `"allowed_origins"`, `"allow_non_loopback"`,
      `"max_sessions"`, `"session_idle_timeout_ms"`, `"stop_timeout_ms"`

  A host whose configuration's `"defaults"` declare `"handlers"`
  (`%{"sampling" => %{}, "elicitation" => %{"form" => true}, "roots" =>
  %{}}`) lets its servers ask; while served, their requests go to the front
  clients, not to `:request_handler`. A non-loopback address without
  `"auth"` is `{:error, {:policy_denied, info}}`. `stop_serving/2` ends it.
  """
  @spec serve(host(), keyword()) :: {:ok, %{ref: reference(), url: String.t() | nil}} | {:error, term()}
  def serve(host, opts) do
    with {:ok, how} <- serve_how(opts),
         {:ok, ref} <- lib_result(NIF.server_new(GenServer.call(host, :ref), opts[:options])) do
      started =
        case how do
          {:http, addr} -> NIF.server_serve_http(ref, addr)
          {:fds, i, o} -> with :ok <- NIF.server_serve_fds(ref, i, o), do: {:ok, nil}
        end

      case lib_result(started) do
        {:ok, url} ->
          {:ok, %{ref: ref, url: url}}

        error ->
          NIF.server_free(ref)
          error
      end
    end
  end

  defp serve_how(opts) do
    case {opts[:http], opts[:fds]} do
      {addr, nil} when is_binary(addr) and addr != "" -> {:ok, {:http, addr}}
      {nil, {i, o}} when is_integer(i) and is_integer(o) -> {:ok, {:fds, i, o}}
      _ -> {:error, {:invalid_argument, "serve: give http: \"HOST:PORT\" or fds: {in_fd, out_fd}, one of them"}}
    end
  end

  defp lib_result({:error, status, info}), do: {:error, Error.reason(status, info)}
  defp lib_result(other), do: other

  @doc """
  Waits until serving ended (a stdio front closed its input, or
  `stop_serving/2`): `:ok`, or `{:error, :timeout}` (`LemonMCP.Error`'s
  reason for a timeout) after `timeout` ms.
  """
  @spec await_serving(%{ref: reference()}, timeout()) :: :ok | {:error, term()}
  def await_serving(%{ref: ref}, timeout \\ :infinity) do
    lib_result(NIF.server_wait(ref, if(timeout == :infinity, do: -1, else: timeout)))
  end

  @doc """
  Ends serving gracefully (no new call is taken; the calls in flight get up
  to `timeout` ms, then are cancelled) and frees the server; `:ok`.
  """
  @spec stop_serving(%{ref: reference()}, timeout()) :: :ok | {:error, term()}
  def stop_serving(%{ref: ref}, timeout \\ 10_000) do
    result = lib_result(NIF.server_stop(ref, if(timeout == :infinity, do: -1, else: timeout)))
    NIF.server_free(ref)
    result
  end

  @doc "Closes every server (the process stays alive); `:ok`."
  @spec close(host(), timeout()) :: :ok | {:error, term()}
  def close(host, timeout \\ 5_000) do
    ms = if timeout == :infinity, do: -1, else: timeout

    case NIF.host_close(GenServer.call(host, :closing_ref), ms) do
      :ok -> :ok
      {:error, status, info} -> {:error, Error.reason(status, info)}
    end
  end

  # ------------------------------------------------------------ helpers

  defp file_options(opts) do
    o = %{}
    o = if opts[:strict], do: Map.put(o, "strict", true), else: o
    o = if i = opts[:inputs], do: Map.put(o, "inputs", Map.new(i, fn {k, v} -> {to_string(k), v} end)), else: o
    o = if w = opts[:workspace_folder], do: Map.put(o, "workspace_folder", w), else: o
    o = if s = opts[:start], do: Map.put(o, "start", s), else: o
    o = if p = opts[:tool_prefix], do: Map.put(o, "override", %{"tool_prefix" => p}), else: o
    if o == %{}, do: nil, else: o
  end

  defp new_host({:file, path}, opts), do: NIF.host_new_file(path, file_options(opts))
  defp new_host(config, _opts), do: NIF.host_new(config)

  # Each server that failed is logged once, with why.
  defp log_failed(host) do
    with {:ok, servers} <- lib(host, &NIF.host_servers/1) do
      failed = for {name, %{"state" => "failed"} = r} <- servers, into: %{}, do: {name, r}

      # The library's one line saying why (its report's "summary").
      for {_name, r} <- GenServer.call(host, {:not_yet_logged, failed}) do
        Logger.warning(r["summary"])
      end
    end

    :ok
  end

  defp load(config) when is_map(config), do: {:ok, config}

  # A JSON text, tagged by the caller: a bare string is a path, which goes
  # to the library's reader (new_host/2).
  defp load({:json, config}) when is_binary(config) do
    case NIF.decode_json(config) do
      {:ok, %{} = map} -> {:ok, map}
      {:ok, _} -> {:error, {:invalid_argument, "the host configuration must be a JSON object"}}
      {:error, {msg, off}} when is_binary(msg) -> {:error, {:invalid_argument, "config: #{msg} at offset #{off}"}}
      {:error, reason} -> {:error, {:invalid_argument, "config: #{inspect(reason)}"}}
    end
  end

  # The blocking library functions (wait_ready) run in the caller (on a
  # dirty scheduler), not in the host process, so one slow wait never holds
  # up other callers.
  defp lib(host, fun) do
    ref = GenServer.call(host, :ref)

    case fun.(ref) do
      :ok -> :ok
      {:ok, v} -> {:ok, v}
      {:error, status, info} -> {:error, Error.reason(status, info)}
    end
  end

  defp list(host, query, key) do
    with {:ok, doc} <- query(host, query, nil), do: {:ok, doc[key] || []}
  end

  # A list or the tool search: answered as a call is, by a message to the
  # host's process, so no scheduler waits while a stale list is fetched. The
  # library bounds the wait (the servers' call and ready timeouts).
  defp query(host, name, args), do: GenServer.call(host, {:query, name, args}, :infinity)

  # Every call option a client's call takes (LemonMCP.CallOptions).
  defp options(opts) do
    o = LemonMCP.CallOptions.to_json(opts, if(t = opts[:timeout], do: %{"timeout_ms" => t}, else: %{}))
    if o == %{}, do: nil, else: o
  end

  defp outer(opts) do
    case opts[:timeout] do
      nil -> :infinity
      ms -> ms + 5_000
    end
  end

  # ------------------------------------------------------------- server

  @impl true
  def init({config, opts}) do
    with {:ok, ref} <- new_host(config, opts),
         {:ok, warnings} <- NIF.host_warnings(ref),
         :ok <- Enum.each(warnings, &Logger.warning/1),
         :ok <- NIF.host_set_handlers(ref, :host),
         telemetry? = LemonMCP.Telemetry.records?(),
         :ok <- if(telemetry?, do: NIF.host_set_telemetry(ref, :host), else: :ok),
         :ok <- NIF.host_connect(ref) do
      {:ok,
       %{
         ref: ref,
         pending: %{},
         subscriber: opts[:subscriber],
         handler: opts[:request_handler],
         store: opts[:store],
         warnings: warnings,
         logged: MapSet.new(),
         telemetry?: telemetry?,
         # Telemetry records of pending calls (call id => record), each
         # handed to the caller with the call's reply.
         records: %{}
       }}
    else
      {:error, status, info} -> {:stop, Error.reason(status, info)}
      {:error, reason} -> {:stop, reason}
    end
  end

  @impl true
  def handle_call(:ref, _from, st), do: {:reply, st.ref, st}

  # close/2: the sessions it ends are reported by the core to a handler
  # registered by then.
  def handle_call(:closing_ref, _from, st) do
    st = register_late(st)
    {:reply, st.ref, st}
  end

  def handle_call(:warnings, _from, st), do: {:reply, st.warnings, st}

  def handle_call({:not_yet_logged, failed}, _from, st) do
    new = Enum.reject(failed, fn {name, _} -> MapSet.member?(st.logged, name) end)
    {:reply, new, %{st | logged: Enum.reduce(new, st.logged, fn {n, _}, acc -> MapSet.put(acc, n) end)}}
  end

  def handle_call({:call_tool, name, args, opts}, from, st) do
    start_call(NIF.host_call_tool(st.ref, name, args, opts), {from, :recorded}, st)
  end

  def handle_call({:call, server, method, params, opts}, from, st) do
    start_call(NIF.host_call(st.ref, server, method, params, opts), {from, :recorded}, st)
  end

  def handle_call({:query, name, args}, from, st) do
    start_call(NIF.host_query(st.ref, name, args, nil), {from, :plain}, st)
  end

  # A tool's server and own name as the library routes the call (the
  # catalogue of the last list, else a name's server prefix), never split
  # here; nil: unknown until the call's record.
  def handle_call({:route, name}, _from, st) do
    route =
      case NIF.host_tool_route(st.ref, name) do
        {:ok, %{"server" => server, "original_name" => tool}} -> {server, tool}
        _ -> nil
      end

    {:reply, route, st}
  end

  # pending: call id => {from, :recorded | :plain}; a :recorded call's reply
  # carries its telemetry record (LemonMCP.Telemetry.span/5 takes it).
  defp start_call({:ok, id}, waiter, st), do: {:noreply, put_in(st.pending[id], waiter)}

  defp start_call({:error, status, info}, {_from, kind}, st),
    do: {:reply, LemonMCP.Completion.reply_for(kind, {:error, Error.reason(status, info)}, nil, status, info), st}

  defp start_call({:error, reason}, _waiter, st), do: {:reply, {:error, reason}, st}

  # The library's telemetry handler, only when events go somewhere (with a
  # handler the core measures every call): at start, or later for the
  # sessions' records (LemonMCP.Telemetry.register_late/2).
  defp register_late(st) do
    %{st | telemetry?: LemonMCP.Telemetry.register_late(st.telemetry?, fn -> NIF.host_set_telemetry(st.ref, :host) end)}
  end

  @impl true
  def handle_info({:lmcp_done, id, status, payload}, st) do
    case LemonMCP.Completion.done(st.pending, st.records, id, status, payload, :disconnected) do
      :unknown ->
        {:noreply, st}

      {_kind, _reply, pending, records} ->
        {:noreply, %{st | pending: pending, records: records}}
    end
  end

  # A call's record comes before its completion; kept only for a pending
  # call (the library's other records have no caller to go to).
  def handle_info({:lmcp_telemetry, :host, :call, %{"call_id" => id} = record}, st) do
    if Map.has_key?(st.pending, id),
      do: {:noreply, put_in(st.records[id], record)},
      else: {:noreply, st}
  end

  def handle_info({:lmcp_event, :host, kind, payload}, st) do
    if kind in [:restarting, :failed], do: LemonMCP.Telemetry.server_event(self(), kind, payload)
    if st.subscriber, do: send(st.subscriber, {:lemon_mcp_host, self(), kind, payload})
    {:noreply, if(kind == :ready, do: register_late(st), else: st)}
  end

  def handle_info({:lmcp_telemetry, :host, :session, record}, st) do
    LemonMCP.Telemetry.session_record(self(), record)
    {:noreply, st}
  end

  def handle_info({:lmcp_app_request, :host, id, kind, payload}, %{store: {_load, _save} = store} = st)
      when kind in [:store_load, :store_save] do
    ref = st.ref

    Task.start(fn ->
      {status, answer} = LemonMCP.Store.answer(kind, payload, store)
      NIF.host_respond(ref, id, status, answer)
    end)

    {:noreply, st}
  end

  def handle_info({:lmcp_app_request, :host, id, kind, payload}, st) do
    ref = st.ref
    handler = st.handler

    Task.start(fn ->
      {status, answer} =
        if handler do
          try do
            case handler.(kind, payload) do
              {:ok, result} when is_map(result) ->
                {0, result}

              {:error, reason} ->
                {Error.code(:policy_denied), %{"code" => -1, "message" => "refused: #{inspect(reason)}"}}
            end
          rescue
            e ->
              {Error.code(:internal), %{"code" => -32603, "message" => "host handler failed: " <> Exception.message(e)}}
          end
        else
          {Error.code(:unsupported), %{"code" => -32601, "message" => "this host does not handle #{kind}"}}
        end

      NIF.host_respond(ref, id, status, answer)
    end)

    {:noreply, st}
  end

  def handle_info(_other, st), do: {:noreply, st}

  @impl true
  def terminate(_reason, st) do
    st = register_late(st)
    NIF.host_close(st.ref, 5_000)
    # The free delivers every session record of this close before it
    # returns, to this process, whose loop no longer runs.
    NIF.host_free(st.ref)
    LemonMCP.Telemetry.drain_session_records(self(), :host)
  end
end
