defmodule LemonMCP.Error do
  @moduledoc """
  How library statuses become the error reasons of `LemonMCP.Client`.

  | status (include/lemonmcp.h)  | reason                                          |
  |------------------------------|-------------------------------------------------|
  | `LMCP_E_TIMEOUT`             | `:timeout`                                      |
  | `LMCP_E_CLOSED`              | `:connection_closed`                            |
  | `LMCP_E_CANCELLED`           | `:cancelled`                                    |
  | `LMCP_E_PROTOCOL`            | `{:rpc_error, %{code:, message:, data:}}` (the server's JSON-RPC error), or `{:protocol_error, message}` when the server broke the protocol |
  | `LMCP_E_INVALID_STATE`       | `{:not_ready, state}`                           |
  | `LMCP_E_UNSUPPORTED`         | `{:unsupported, message}`                       |
  | `LMCP_E_AUTH_REQUIRED`       | `{:auth_required, metadata}`                    |
  | `LMCP_E_POLICY_DENIED`       | `{:policy_denied, data}`                        |
  | `LMCP_E_INVALID_ARGUMENT`    | `{:invalid_argument, message}`                  |
  | `LMCP_E_TRANSPORT`           | `{:transport_error, message}`                   |
  | any other                    | `{status_atom, message}`                        |
  """

  @statuses %{
    0 => :ok,
    -1 => :invalid_argument,
    -2 => :invalid_handle,
    -3 => :invalid_state,
    -4 => :not_found,
    -5 => :timeout,
    -6 => :cancelled,
    -7 => :closed,
    -8 => :transport_error,
    -9 => :protocol_error,
    -10 => :unsupported,
    -11 => :auth_required,
    -12 => :policy_denied,
    -13 => :abi_mismatch,
    -14 => :internal
  }

  @doc "The status code of a status name, e.g. `code(:policy_denied)` is -12."
  @spec code(atom()) :: integer()
  def code(name) do
    {code, _} = Enum.find(@statuses, fn {_, n} -> n == name end)
    code
  end

  @doc "The name of a status code."
  @spec status_name(integer()) :: atom()
  def status_name(status), do: Map.get(@statuses, status, :unknown_status)

  @doc """
  The reason for a failed status. `info` is the library's error object (a map
  with binary keys); `state` is the client state for `{:not_ready, state}`.
  """
  @spec reason(integer(), term(), atom()) :: term()
  def reason(status, info, state \\ :disconnected)
  def reason(-5, _info, _state), do: :timeout
  def reason(-7, _info, _state), do: :connection_closed
  def reason(-6, _info, _state), do: :cancelled
  def reason(-3, _info, state), do: {:not_ready, state}

  def reason(-9, %{"code" => code} = info, _state) when is_integer(code) do
    {:rpc_error, %{code: code, message: Map.get(info, "message", ""), data: Map.get(info, "data")}}
  end

  def reason(-11, info, _state), do: {:auth_required, data_or_info(info)}
  def reason(-12, %{"data" => %{"held" => held}} = info, _state) when is_map(held) do
    {:policy_denied, %{"held" => held, "message" => held_message(message(info), held)}}
  end

  def reason(-12, info, _state), do: {:policy_denied, data_or_info(info)}
  def reason(status, info, _state), do: {status_name(status), message(info)}

  @doc false
  # The reply to the caller of a call that completed ({:lmcp_done, id,
  # status, payload}): one place for the client and the host, so that their
  # replies cannot drift (a payload the shim could not decode is an error
  # for both).
  def done_reply(status, payload, state \\ :disconnected)
  def done_reply(0, {:lmcp_raw, _raw, why}, _state), do: {:error, {:decode_error, why}}
  def done_reply(0, payload, _state), do: {:ok, payload}
  def done_reply(status, info, state), do: {:error, reason(status, info, state)}

  @doc false
  def message(%{"message" => m}) when is_binary(m), do: m
  def message({:lmcp_raw, raw, _why}), do: raw
  def message(other), do: inspect(other)

  # A held definition (the host's pins): the library's words, then what an
  # Elixir application does about it, from the data (never from the words).
  defp held_message(words, %{"status" => "unchecked"}), do: words

  defp held_message(words, %{"kind" => "instructions", "server" => server}) do
    "#{words}: LemonMCP.Host.pins/1 shows them, " <>
      "LemonMCP.Host.approve(host, #{inspect(server)}, nil, hash, \"instructions\") approves them"
  end

  defp held_message(words, %{"kind" => kind, "name" => name, "server" => server}) do
    "#{words}: LemonMCP.Host.pins/1 shows it, " <>
      "LemonMCP.Host.approve(host, #{inspect(server)}, #{inspect(name)}, hash, #{inspect(kind)}) approves it"
  end

  defp held_message(words, _held), do: words

  defp data_or_info(%{"data" => data}) when data != nil, do: data
  defp data_or_info(info), do: info
end
