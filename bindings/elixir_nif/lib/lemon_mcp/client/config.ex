defmodule LemonMCP.Client.Config do
  @moduledoc false
  # Start options -> the library's configuration (include/lemonmcp.h,
  # CONFIGURATION) plus the callbacks the client process keeps.

  alias LemonMCP.Sampling

  @common [
    :client_name,
    :client_version,
    :capabilities,
    :sampling_handler,
    :sampling_policy,
    :elicitation_handler,
    :roots,
    :timeout_ms,
    :ready_timeout_ms,
    :close_grace_ms,
    :max_message_bytes,
    :protocol_versions,
    :protocol_mode,
    :protocol_tasks,
    :result_format,
    :subscriber,
    :name,
    # The seed's start timeout (HTTP/SSE: start waits for the handshake).
    :timeout
  ]

  @stdio [:command, :args, :env, :env_inherit, :cwd, :stderr]
  @http [:url, :headers, :oauth, :oauth_token_cache, :oauth_token_loader, :oauth_token_persister]

  @doc false
  def known(:stdio), do: @common ++ @stdio
  def known(_http), do: @common ++ @http

  @doc false
  # {:ok, config, callbacks} | {:error, reason}
  def build(kind, opts) when is_list(opts) do
    with :ok <- check_keys(kind, opts),
         {:ok, transport} <- transport(kind, opts),
         {:ok, auth, auth_handlers, auth_callbacks, ready_hint} <- oauth(kind, opts),
         {:ok, policy, policy_callbacks} <- Sampling.validate_policy(opts[:sampling_policy]),
         {:ok, callbacks} <- callbacks(opts, policy_callbacks),
         {:ok, client_info} <- client_info(opts),
         {:ok, timeouts} <- timeouts(opts, kind, ready_hint),
         {:ok, caps} <- capabilities(opts[:capabilities]),
         {:ok, format} <- result_format(opts[:result_format]) do
      callbacks = Map.merge(callbacks, auth_callbacks)

      handlers =
        %{}
        |> put_if(Map.has_key?(callbacks, :sampling_handler), "sampling", %{})
        |> put_if(Map.has_key?(callbacks, :elicitation_handler), "elicitation", %{"form" => true})
        |> put_if(Map.has_key?(callbacks, :roots), "roots", %{})
        |> Map.merge(auth_handlers)

      # The seed: a handler wins over a policy.
      policy = if Map.has_key?(callbacks, :sampling_handler), do: nil, else: policy

      config =
        %{"transport" => transport, "client_info" => client_info, "result_format" => format}
        |> put_unless_empty("timeouts", timeouts)
        |> put_unless_empty("handlers", handlers)
        |> put_unless_empty("capabilities", caps)
        |> put_unless_nil("sampling_policy", policy)
        |> put_unless_nil("limits", limits(opts))
        |> put_unless_nil("protocol", protocol(opts))
        |> put_unless_nil("auth", auth)

      {:ok, config, callbacks}
    end
  end

  def build(_kind, _opts), do: invalid("options must be a keyword list")

  defp check_keys(kind, opts) do
    case Enum.find(opts, fn
           {k, _} -> k not in known(kind)
           _ -> true
         end) do
      nil -> :ok
      {k, _} -> invalid("unknown option #{inspect(k)}")
      other -> invalid("options must be a keyword list, found #{inspect(other)}")
    end
  end

  # ---------------------------------------------------------- transports

  defp transport(:stdio, opts) do
    with {:ok, command} <- command(Keyword.get(opts, :command)),
         {:ok, args} <- strings(Keyword.get(opts, :args, []), "args"),
         {:ok, env} <- env(Keyword.get(opts, :env, [])),
         {:ok, extra} <- stdio_extra(opts) do
      {:ok, Map.merge(%{"type" => "stdio", "command" => command, "args" => args, "env" => env}, extra)}
    end
  end

  defp transport(type, opts) when type in [:streamable_http, :sse] do
    with {:ok, url} <- url(Keyword.get(opts, :url)),
         {:ok, headers} <- headers(Keyword.get(opts, :headers, [])) do
      {:ok, %{"type" => Atom.to_string(type), "url" => url, "headers" => headers}}
    end
  end

  # The seed's wording, so hosts matching on it keep working.
  defp command(c) when is_binary(c) do
    if String.trim(c) == "",
      do: {:error, {:invalid_command, "command cannot be empty"}},
      else: {:ok, c}
  end

  defp command(nil), do: {:error, {:invalid_command, "command cannot be empty"}}
  defp command(_), do: {:error, {:invalid_command, "command must be a string"}}

  defp strings(list, what) when is_list(list) do
    if Enum.all?(list, &(is_binary(&1) or is_atom(&1) or is_number(&1))) do
      {:ok, Enum.map(list, &to_string/1)}
    else
      invalid("#{what} must be a list of strings")
    end
  end

  defp strings(_, what), do: invalid("#{what} must be a list of strings")

  defp env(env) when is_list(env) or is_map(env) do
    Enum.reduce_while(env, {:ok, %{}}, fn
      {k, v}, {:ok, acc} when (is_binary(k) or is_atom(k)) and (is_binary(v) or is_number(v)) ->
        {:cont, {:ok, Map.put(acc, to_string(k), to_string(v))}}

      other, _ ->
        {:halt, invalid("env entries must be {name, value} strings, found #{inspect(other)}")}
    end)
  end

  defp env(_), do: invalid("env must be a keyword list or a map")

  defp stdio_extra(opts) do
    with {:ok, m} <- enum_opt(%{}, opts, :env_inherit, "env_inherit", [:minimal, :all]),
         {:ok, m} <- enum_opt(m, opts, :stderr, "stderr", [:capture, :merge, :discard]) do
      case Keyword.get(opts, :cwd) do
        nil -> {:ok, m}
        cwd when is_binary(cwd) -> {:ok, Map.put(m, "cwd", cwd)}
        _ -> invalid("cwd must be a string")
      end
    end
  end

  defp enum_opt(m, opts, key, field, allowed) do
    case Keyword.get(opts, key) do
      nil ->
        {:ok, m}

      v when is_atom(v) ->
        if v in allowed, do: {:ok, Map.put(m, field, Atom.to_string(v))}, else: bad_enum(key, allowed)

      v when is_binary(v) ->
        enum_opt(m, [{key, String.to_atom(v)}], key, field, allowed)

      _ ->
        bad_enum(key, allowed)
    end
  end

  defp bad_enum(key, allowed), do: invalid("#{key} must be one of #{inspect(allowed)}")

  defp url(u) when is_binary(u) and u != "", do: {:ok, u}
  defp url(_), do: invalid("url must be a non-empty string")

  defp headers(h) when is_list(h) or is_map(h) do
    Enum.reduce_while(h, {:ok, %{}}, fn
      {k, v}, {:ok, acc} when (is_binary(k) or is_atom(k)) and is_binary(v) ->
        {:cont, {:ok, Map.put(acc, to_string(k), v)}}

      other, _ ->
        {:halt, invalid("headers must be {name, value} strings, found #{inspect(other)}")}
    end)
  end

  defp headers(_), do: invalid("headers must be a list of {name, value} pairs")

  # OAuth (HTTP transports only): see LemonMCP.Client.OAuth.
  defp oauth(:stdio, _opts), do: {:ok, nil, %{}, %{}, nil}

  # The seed's legacy SSE client had no OAuth; neither has this one (a 401
  # there is still {:auth_required, metadata}).
  defp oauth(:sse, opts) do
    if oauth_given?(opts),
      do: {:error, {:unsupported, "the legacy SSE client takes no OAuth options; use LemonMCP.Client.HTTP"}},
      else: {:ok, nil, %{}, %{}, nil}
  end

  defp oauth(_http, opts) do
    if auth_supported?() or not oauth_given?(opts) do
      LemonMCP.Client.OAuth.build(opts)
    else
      {:error,
       {:unsupported,
        "oauth: this build of liblemonmcp has no OAuth support (auth_flows: #{inspect(LemonMCP.features()["auth_flows"])})"}}
    end
  end

  defp oauth_given?(opts) do
    Enum.any?([:oauth, :oauth_token_cache, :oauth_token_loader, :oauth_token_persister], fn k ->
      Keyword.get(opts, k) not in [nil, [], %{}]
    end)
  end

  defp auth_supported?, do: (LemonMCP.features()["auth_flows"] || []) != []

  # ---------------------------------------------------------- the rest

  defp callbacks(opts, policy_callbacks) do
    with :ok <- fun_opt(opts, :sampling_handler, 1),
         :ok <- fun_opt(opts, :elicitation_handler, 1),
         :ok <- roots_opt(opts[:roots]) do
      cbs =
        %{}
        |> put_unless_nil(:sampling_handler, opts[:sampling_handler])
        |> put_unless_nil(:elicitation_handler, opts[:elicitation_handler])
        |> put_unless_nil(:roots, opts[:roots])
        |> put_unless_nil(:reviewer, policy_callbacks[:reviewer])
        |> put_unless_nil(:delegate, policy_callbacks[:delegate])

      {:ok, cbs}
    end
  end

  defp fun_opt(opts, key, arity) do
    case opts[key] do
      nil -> :ok
      f when is_function(f, arity) -> :ok
      _ -> invalid("#{key} must be a function of arity #{arity}")
    end
  end

  defp roots_opt(nil), do: :ok
  defp roots_opt(f) when is_function(f, 0), do: :ok
  defp roots_opt(l) when is_list(l), do: if(Enum.all?(l, &is_map/1), do: :ok, else: bad_roots())
  defp roots_opt(_), do: bad_roots()
  defp bad_roots, do: invalid("roots must be a list of %{uri:, name:} maps or a function returning one")

  defp client_info(opts) do
    name = Keyword.get(opts, :client_name, "lemon-mcp")
    version = Keyword.get(opts, :client_version, "0.1.0")

    if is_binary(name) and name != "" and is_binary(version) and version != "" do
      {:ok, %{"name" => name, "version" => version}}
    else
      invalid("client_name and client_version must be non-empty strings")
    end
  end

  defp timeouts(opts, kind, ready_hint) do
    [timeout_ms: "call_ms", ready_timeout_ms: "ready_ms", close_grace_ms: "close_grace_ms"]
    |> Enum.reduce_while({:ok, %{}}, fn {key, field}, {:ok, acc} ->
      case Keyword.get(opts, key) do
        nil -> {:cont, {:ok, acc}}
        :infinity when key == :timeout_ms -> {:cont, {:ok, Map.put(acc, field, 0)}}
        n when is_integer(n) and n >= 0 -> {:cont, {:ok, Map.put(acc, field, n)}}
        _ -> {:halt, invalid("#{key} must be a non-negative integer")}
      end
    end)
    |> case do
      {:ok, t} -> {:ok, ready_default(t, kind, Keyword.get(opts, :timeout), ready_hint)}
      error -> error
    end
  end

  # HTTP and SSE start waits for the handshake, bounded by the seed's
  # :timeout start option; the library's own bound (ready_ms) follows it
  # unless :ready_timeout_ms is given. With an authorization code provider
  # and neither given, the handshake may last the whole interactive
  # authorization (auth.authorization_timeout_ms, plus a margin).
  defp ready_default(%{"ready_ms" => _} = t, _kind, _timeout, _hint), do: t
  defp ready_default(t, :stdio, _timeout, _hint), do: t

  defp ready_default(t, _http, timeout, _hint) when is_integer(timeout) and timeout > 0,
    do: Map.put(t, "ready_ms", timeout)

  defp ready_default(t, _http, _timeout, hint) when is_integer(hint), do: Map.put(t, "ready_ms", hint)
  defp ready_default(t, _http, _timeout, _hint), do: t

  defp limits(opts) do
    case Keyword.get(opts, :max_message_bytes) do
      nil -> nil
      n -> %{"max_message_bytes" => n}
    end
  end

  # protocol.versions, protocol.mode ("legacy" | "auto" | "modern") and
  # protocol.tasks (the tasks extension, docs/modern.md); the library
  # validates them.
  defp protocol(opts) do
    p =
      %{}
      |> put_unless_nil("versions", Keyword.get(opts, :protocol_versions))
      |> put_unless_nil("mode", Keyword.get(opts, :protocol_mode))
      |> put_unless_nil("tasks", Keyword.get(opts, :protocol_tasks))

    if p == %{}, do: nil, else: p
  end

  # The seed sends :capabilities as given. The library advertises roots,
  # sampling and elicitation only for handlers that can answer, so those
  # come from :roots, :sampling_handler/:sampling_policy and
  # :elicitation_handler; an empty entry for them here is ignored.
  defp capabilities(nil), do: {:ok, %{}}

  defp capabilities(caps) when is_map(caps) or is_list(caps) do
    caps = Enum.into(caps, %{}, fn {k, v} -> {to_string(k), v} end)

    Enum.reduce_while(caps, {:ok, %{}}, fn
      {"experimental", v}, {:ok, acc} when is_map(v) ->
        {:cont, {:ok, Map.put(acc, "experimental", v)}}

      {k, v}, {:ok, acc} when k in ["roots", "sampling", "elicitation"] and v in [%{}, [], nil] ->
        {:cont, {:ok, acc}}

      {k, _}, _ when k in ["roots", "sampling", "elicitation"] ->
        {:halt, invalid("capabilities.#{k} is advertised from a handler: use the :#{handler_option(k)} option")}

      {k, _}, _ ->
        {:halt, invalid("capabilities.#{k} is not a client capability this build declares")}
    end)
  end

  defp capabilities(_), do: invalid("capabilities must be a map")

  defp handler_option("roots"), do: "roots"
  defp handler_option("sampling"), do: "sampling_handler or :sampling_policy"
  defp handler_option("elicitation"), do: "elicitation_handler"

  @doc false
  # The result format the NIF asks for. "etf" only when this build has it.
  def default_result_format do
    if "etf" in (LemonMCP.features()["result_formats"] || []) and preferred_format() == "etf",
      do: "etf",
      else: "json"
  end

  # Which decoding path is faster for this NIF (measured: see README).
  defp preferred_format, do: "json"

  defp result_format(nil), do: {:ok, default_result_format()}
  defp result_format(f) when f in [:json, "json"], do: {:ok, "json"}

  defp result_format(f) when f in [:etf, "etf"] do
    if "etf" in (LemonMCP.features()["result_formats"] || []),
      do: {:ok, "etf"},
      else: {:error, {:unsupported, "result_format :etf: this build of liblemonmcp delivers JSON only"}}
  end

  defp result_format(_), do: invalid("result_format must be :json or :etf")

  defp put_if(m, true, k, v), do: Map.put(m, k, v)
  defp put_if(m, false, _k, _v), do: m
  defp put_unless_nil(m, _k, nil), do: m
  defp put_unless_nil(m, k, v), do: Map.put(m, k, v)
  defp put_unless_empty(m, _k, v) when v == %{}, do: m
  defp put_unless_empty(m, k, v), do: Map.put(m, k, v)

  defp invalid(msg), do: {:error, {:invalid_option, msg}}
end
