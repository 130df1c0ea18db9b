defmodule LemonMCP.NIF do
  @moduledoc false
  # The NIF shim over liblemonmcp (c_src/, see lmcp_nif.h). Every function starts
  # work and returns at once, except connect/1 and close/2, which run on
  # dirty I/O schedulers. Results arrive as messages:
  #
  #   {:lmcp_done, call_id, status, payload}
  #   {:lmcp_event, tag, kind, payload}
  #   {:lmcp_app_request, tag, request_id, kind, payload}
  #   {:lmcp_telemetry, tag, kind, record}   (set_telemetry/2 only)
  #
  # Library failures are {:error, status, info} (info is the library's error
  # object as a map with binary keys); shim failures {:error, reason}.

  @on_load :load_nif
  @external_resource Path.expand("../../c_src/lmcp_nif.c", __DIR__)
  @external_resource Path.expand("../../c_src/handle_nif.c", __DIR__)
  @external_resource Path.expand("../../c_src/client_nif.c", __DIR__)
  @external_resource Path.expand("../../c_src/host_nif.c", __DIR__)
  @external_resource Path.expand("../../c_src/server_nif.c", __DIR__)
  @external_resource Path.expand("../../c_src/json_term.c", __DIR__)
  @external_resource Path.expand("../../c_src/term_json.c", __DIR__)

  @type client :: reference()
  @type status :: integer()
  @type lib_error :: {:error, status(), map()}

  def load_nif do
    path = :filename.join(:code.priv_dir(:lemon_mcp), ~c"lmcp_nif")
    :erlang.load_nif(path, 0)
  end

  @spec version() :: String.t()
  def version, do: :erlang.nif_error(:not_loaded)

  @spec abi_version() :: integer()
  def abi_version, do: :erlang.nif_error(:not_loaded)

  @spec features() :: {:ok, map()} | lib_error()
  def features, do: :erlang.nif_error(:not_loaded)

  @spec diagnostics() :: {:ok, map()} | lib_error()
  def diagnostics, do: :erlang.nif_error(:not_loaded)

  @spec client_new(map()) :: {:ok, client()} | lib_error() | {:error, term()}
  def client_new(_config), do: :erlang.nif_error(:not_loaded)

  @spec adopt(client()) :: :ok | lib_error()
  def adopt(_client), do: :erlang.nif_error(:not_loaded)

  @spec set_handlers(client(), term()) :: :ok | lib_error()
  def set_handlers(_client, _tag), do: :erlang.nif_error(:not_loaded)

  # The library's telemetry records go to the caller: {:lmcp_telemetry, tag, kind, record}.
  @spec set_telemetry(client(), term()) :: :ok | lib_error()
  def set_telemetry(_client, _tag), do: :erlang.nif_error(:not_loaded)

  @spec connect(client()) :: :ok | lib_error()
  def connect(_client), do: :erlang.nif_error(:not_loaded)

  # Starts a request and returns {:ok, call_id} at once (never waits for the
  # server); the completion {:lmcp_done, call_id, status, payload} is sent to
  # the calling process exactly once, unless the call was refused (then
  # nothing is sent). params and options are maps or nil (options: the
  # library's call options, e.g. %{"timeout_ms" => 5000}); a term that cannot
  # be encoded is {:error, {:encode_failed, message}}, the message naming
  # the argument.
  @spec call(client(), binary(), map() | nil, map() | nil) ::
          {:ok, non_neg_integer()} | lib_error() | {:error, term()}
  def call(_client, _method, _params, _options), do: :erlang.nif_error(:not_loaded)

  @spec cancel(client(), non_neg_integer()) :: :ok | lib_error()
  def cancel(_client, _call_id), do: :erlang.nif_error(:not_loaded)

  @spec notify(client(), binary(), map() | nil) :: :ok | lib_error() | {:error, term()}
  def notify(_client, _method, _params), do: :erlang.nif_error(:not_loaded)

  @spec respond(client(), non_neg_integer(), integer(), map() | nil) ::
          :ok | lib_error() | {:error, term()}
  def respond(_client, _request_id, _status, _answer), do: :erlang.nif_error(:not_loaded)

  @spec state(client()) :: integer() | lib_error()
  def state(_client), do: :erlang.nif_error(:not_loaded)

  @spec server_info(client()) :: {:ok, map()} | lib_error()
  def server_info(_client), do: :erlang.nif_error(:not_loaded)

  @spec close(client(), integer()) :: :ok | lib_error()
  def close(_client, _timeout_ms), do: :erlang.nif_error(:not_loaded)

  @spec free(client()) :: :ok
  def free(_client), do: :erlang.nif_error(:not_loaded)

  @spec decode_json(binary()) :: {:ok, term()} | {:error, {binary(), non_neg_integer()}}
  def decode_json(_json), do: :erlang.nif_error(:not_loaded)

  @spec encode_json(term()) :: {:ok, binary()} | {:error, term()}
  def encode_json(_term), do: :erlang.nif_error(:not_loaded)

  # ------------------------------------------------------------------ host
  # The multi-server host (lmcp_host); see LemonMCP.Host.

  @type host :: reference()

  @spec host_new(map()) :: {:ok, host()} | lib_error() | {:error, term()}
  def host_new(_config), do: :erlang.nif_error(:not_loaded)

  @spec host_new_file(String.t(), map() | nil) :: {:ok, host()} | lib_error() | {:error, term()}
  def host_new_file(_path, _options), do: :erlang.nif_error(:not_loaded)

  @spec host_warnings(host()) :: {:ok, [String.t()]} | lib_error()
  def host_warnings(_host), do: :erlang.nif_error(:not_loaded)

  @spec host_tool_route(host(), String.t()) :: {:ok, map()} | lib_error()
  def host_tool_route(_host, _name), do: :erlang.nif_error(:not_loaded)

  @spec host_set_handlers(host(), term()) :: :ok | lib_error()
  def host_set_handlers(_host, _tag), do: :erlang.nif_error(:not_loaded)

  @spec host_set_telemetry(host(), term()) :: :ok | lib_error()
  def host_set_telemetry(_host, _tag), do: :erlang.nif_error(:not_loaded)

  @spec host_connect(host()) :: :ok | lib_error()
  def host_connect(_host), do: :erlang.nif_error(:not_loaded)

  @spec host_wait_ready(host(), integer()) :: :ok | lib_error()
  def host_wait_ready(_host, _timeout_ms), do: :erlang.nif_error(:not_loaded)

  @spec host_servers(host()) :: {:ok, map()} | lib_error()
  def host_servers(_host), do: :erlang.nif_error(:not_loaded)

  @spec host_pins(host()) :: {:ok, map()} | lib_error()
  def host_pins(_host), do: :erlang.nif_error(:not_loaded)

  @spec host_approve(host(), binary()) :: :ok | lib_error()
  def host_approve(_host, _approval_json), do: :erlang.nif_error(:not_loaded)

  @spec host_call_tool(host(), binary(), map() | nil, map() | nil) ::
          {:ok, non_neg_integer()} | lib_error() | {:error, term()}
  def host_call_tool(_host, _name, _args, _options), do: :erlang.nif_error(:not_loaded)

  @spec host_call(host(), binary(), binary(), map() | nil, map() | nil) ::
          {:ok, non_neg_integer()} | lib_error() | {:error, term()}
  def host_call(_host, _server, _method, _params, _options), do: :erlang.nif_error(:not_loaded)

  @spec host_cancel(host(), non_neg_integer()) :: :ok | lib_error()
  def host_cancel(_host, _call_id), do: :erlang.nif_error(:not_loaded)

  @spec host_respond(host(), non_neg_integer(), integer(), map() | nil) ::
          :ok | lib_error() | {:error, term()}
  def host_respond(_host, _request_id, _status, _answer), do: :erlang.nif_error(:not_loaded)

  @spec host_close(host(), integer()) :: :ok | lib_error()
  def host_close(_host, _timeout_ms), do: :erlang.nif_error(:not_loaded)

  @spec host_free(host()) :: :ok
  def host_free(_host), do: :erlang.nif_error(:not_loaded)

  @spec host_query(host(), binary(), map() | nil, nil) ::
          {:ok, non_neg_integer()} | lib_error() | {:error, term()}
  def host_query(_host, _name, _args, _options), do: :erlang.nif_error(:not_loaded)

  # The host served as one MCP server (c_src/server_nif.c, docs/gateway.md).
  @spec server_new(reference(), map() | nil) :: {:ok, reference()} | lib_error() | {:error, term()}
  def server_new(_host, _options), do: :erlang.nif_error(:not_loaded)

  @spec server_serve_http(reference(), binary()) :: {:ok, binary()} | lib_error()
  def server_serve_http(_server, _addr), do: :erlang.nif_error(:not_loaded)

  @spec server_serve_fds(reference(), integer(), integer()) :: :ok | lib_error()
  def server_serve_fds(_server, _in_fd, _out_fd), do: :erlang.nif_error(:not_loaded)

  @spec server_wait(reference(), integer()) :: :ok | lib_error()
  def server_wait(_server, _timeout_ms), do: :erlang.nif_error(:not_loaded)

  @spec server_stop(reference(), integer()) :: :ok | lib_error()
  def server_stop(_server, _timeout_ms), do: :erlang.nif_error(:not_loaded)

  @spec server_free(reference()) :: :ok
  def server_free(_server), do: :erlang.nif_error(:not_loaded)
end
