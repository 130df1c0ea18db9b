defmodule LemonMCP.Client.Config do
  @moduledoc false
  # Start options -> the library's configuration (docs/configuration.md) plus
  # the callbacks the client process keeps.
  #
  # The library judges the configuration: a wrong type, an unknown enum value
  # or an out-of-range number comes back from LemonMCP.NIF.client_new as
  # {:invalid_option, message}, and that message, which names the field by its
  # path (config.timeouts.call_ms for :timeout_ms), is the one users see. This
  # module only does what Elixir must do itself: it maps the seed's options to
  # the configuration's fields (atoms to strings, keyword lists to maps,
  # :infinity to 0), keeps the callbacks, and refuses a term JSON cannot carry
  # (a tuple, a pid, a function) by naming its option and its type. No message
  # shows an option's value: headers, env values and OAuth secrets are
  # secrets.

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
    :subscriber,
    :name,
    # The seed's start timeout (HTTP/SSE: start waits for the handshake).
    :timeout
  ]

  @stdio [:command, :args, :env, :env_inherit, :cwd, :stderr]
  @http [:url, :headers, :oauth, :store, :oauth_token_cache, :oauth_token_loader, :oauth_token_persister]

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
         {:ok, limits} <- limits(opts),
         {:ok, protocol} <- protocol(opts) do
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
        %{"transport" => transport, "client_info" => client_info}
        |> put_unless_empty("timeouts", timeouts)
        |> put_unless_empty("handlers", handlers)
        |> put_unless_empty("capabilities", caps)
        |> put_unless_nil("sampling_policy", policy)
        |> put_unless_nil("limits", limits)
        |> put_unless_nil("protocol", protocol)
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
      other -> invalid("options must be a keyword list, found an element of type #{type_name(other)}")
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

  defp strings(list, what) when is_list(list),
    do: collect(Enum.with_index(list), fn {v, i} -> string_like(v, "#{what}[#{i}]") end)

  defp strings(other, what), do: invalid("#{what} must be a list of strings, not a value of type #{type_name(other)}")

  # Strings, atoms and numbers become strings (the seed's leniency); anything
  # else that JSON can carry goes to the library, which names the field.
  defp string_like(v, _field) when is_binary(v), do: {:ok, v}
  defp string_like(v, _field) when is_atom(v) and v not in [nil, true, false], do: {:ok, Atom.to_string(v)}
  defp string_like(v, _field) when is_number(v), do: {:ok, to_string(v)}
  defp string_like(v, field), do: json(v, field)

  # {name, value} pairs (a keyword list or a map) -> a map of strings.
  # Numbers become strings only where the seed allowed it (env).
  defp env(env), do: string_map(env, "env", true)
  defp headers(h), do: string_map(h, "headers", false)

  defp string_map(pairs, what, numbers?) when is_list(pairs) or is_map(pairs) do
    collect(pairs, fn
      {k, v} when is_binary(k) or is_atom(k) ->
        value =
          cond do
            is_binary(v) -> {:ok, v}
            numbers? and is_number(v) -> {:ok, to_string(v)}
            true -> json(v, "#{what}.#{k}")
          end

        with {:ok, s} <- value, do: {:ok, {to_string(k), s}}

      other ->
        invalid("#{what} entries must be {name, value} pairs, found an element of type #{type_name(other)}")
    end)
    |> to_map()
  end

  defp string_map(other, what, _numbers?),
    do: invalid("#{what} must be a keyword list or a map, not a value of type #{type_name(other)}")

  defp stdio_extra(opts) do
    for(key <- [:env_inherit, :stderr, :cwd], (v = Keyword.get(opts, key)) != nil, do: {key, v})
    |> collect(fn {key, v} ->
      with {:ok, s} <- string_like(v, Atom.to_string(key)), do: {:ok, {Atom.to_string(key), s}}
    end)
    |> to_map()
  end

  defp url(nil), do: {:ok, ""}
  defp url(u), do: string_like(u, "url")

  @doc false
  # term as JSON data: maps with string keys, lists, strings, numbers,
  # booleans and nil; other atoms become strings. A term JSON cannot carry
  # is an error that names the option and the term's type, never its value.
  def json(v, _field) when is_binary(v) or is_number(v) or is_boolean(v) or is_nil(v), do: {:ok, v}
  def json(v, _field) when is_atom(v), do: {:ok, Atom.to_string(v)}

  def json(v, field) when is_map(v) and not is_struct(v) do
    collect(v, fn
      {k, item} when is_binary(k) or is_atom(k) ->
        with {:ok, j} <- json(item, "#{field}.#{k}"), do: {:ok, {to_string(k), j}}

      {k, _} ->
        invalid("#{field}: keys must be strings or atoms, found a key of type #{type_name(k)}")
    end)
    |> to_map()
  end

  def json(v, field) when is_list(v) do
    if v != [] and Keyword.keyword?(v),
      do: json(Map.new(v), field),
      else: collect(Enum.with_index(v), fn {item, i} -> json(item, "#{field}[#{i}]") end)
  end

  def json(v, field), do: invalid("#{field}: a value of type #{type_name(v)} cannot be sent to the library")

  # f returns {:ok, x} or an error for each element: {:ok, [x]} in order, or
  # the first error.
  defp collect(enum, f) do
    Enum.reduce_while(enum, {:ok, []}, fn item, {:ok, acc} ->
      case f.(item) do
        {:ok, x} -> {:cont, {:ok, [x | acc]}}
        error -> {:halt, error}
      end
    end)
    |> case do
      {:ok, l} -> {:ok, Enum.reverse(l)}
      error -> error
    end
  end

  defp to_map({:ok, pairs}), do: {:ok, Map.new(pairs)}
  defp to_map(error), do: error

  @doc false
  # The kind of a term, for messages that must not show the term itself.
  def type_name(v) when is_binary(v), do: "string"
  def type_name(v) when is_boolean(v) or is_nil(v) or is_atom(v), do: "atom"
  def type_name(v) when is_integer(v), do: "integer"
  def type_name(v) when is_float(v), do: "float"
  def type_name(v) when is_struct(v), do: "struct"
  def type_name(v) when is_map(v), do: "map"
  def type_name(v) when is_list(v), do: "list"
  def type_name(v) when is_tuple(v), do: "tuple"
  def type_name(v) when is_function(v), do: "function"
  def type_name(v) when is_pid(v), do: "pid"
  def type_name(v) when is_reference(v), do: "reference"
  def type_name(v) when is_port(v), do: "port"
  def type_name(_), do: "term"

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
    Enum.any?([:oauth, :store, :oauth_token_cache, :oauth_token_loader, :oauth_token_persister], fn k ->
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

  # The seed's default name; the version defaults to the library's own
  # (LMCP_VERSION_STRING), so it is not repeated here.
  defp client_info(opts) do
    %{"name" => Keyword.get(opts, :client_name, "lemon-mcp")}
    |> put_unless_nil("version", Keyword.get(opts, :client_version))
    |> json("client_name")
  end

  defp timeouts(opts, kind, ready_hint) do
    for(
      {key, field} <- [timeout_ms: "call_ms", ready_timeout_ms: "ready_ms", close_grace_ms: "close_grace_ms"],
      (v = Keyword.get(opts, key)) != nil,
      do: {key, field, v}
    )
    |> collect(fn
      {:timeout_ms, field, :infinity} -> {:ok, {field, 0}}
      {key, field, v} -> with {:ok, j} <- json(v, Atom.to_string(key)), do: {:ok, {field, j}}
    end)
    |> to_map()
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
      nil -> {:ok, nil}
      n -> json(%{"max_message_bytes" => n}, "max_message_bytes")
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

    if p == %{}, do: {:ok, nil}, else: json(p, "protocol")
  end

  # The seed sends :capabilities as given. The library advertises roots,
  # sampling and elicitation only for handlers that can answer, so those
  # come from :roots, :sampling_handler/:sampling_policy and
  # :elicitation_handler; an empty entry for them here is ignored.
  defp capabilities(nil), do: {:ok, %{}}

  defp capabilities(caps) when is_map(caps) or is_list(caps) do
    caps = Enum.into(caps, %{}, fn {k, v} -> {to_string(k), v} end)

    Enum.reduce_while(caps, {:ok, %{}}, fn
      {"experimental", v}, {:ok, acc} ->
        case json(v, "capabilities.experimental") do
          {:ok, j} -> {:cont, {:ok, Map.put(acc, "experimental", j)}}
          error -> {:halt, error}
        end

      {k, v}, {:ok, acc} when k in ["roots", "sampling", "elicitation"] and v in [%{}, [], nil] ->
        {:cont, {:ok, acc}}

      {k, _}, _ when k in ["roots", "sampling", "elicitation"] ->
        {:halt, invalid("capabilities.#{k} is advertised from a handler: use the :#{handler_option(k)} option")}

      {k, v}, {:ok, acc} ->
        # the library refuses what it does not declare, naming it
        case json(v, "capabilities.#{k}") do
          {:ok, j} -> {:cont, {:ok, Map.put(acc, k, j)}}
          error -> {:halt, error}
        end
    end)
  end

  defp capabilities(other), do: invalid("capabilities must be a map, not a value of type #{type_name(other)}")

  defp handler_option("roots"), do: "roots"
  defp handler_option("sampling"), do: "sampling_handler or :sampling_policy"
  defp handler_option("elicitation"), do: "elicitation_handler"

  defp put_if(m, true, k, v), do: Map.put(m, k, v)
  defp put_if(m, false, _k, _v), do: m
  defp put_unless_nil(m, _k, nil), do: m
  defp put_unless_nil(m, k, v), do: Map.put(m, k, v)
  defp put_unless_empty(m, _k, v) when v == %{}, do: m
  defp put_unless_empty(m, k, v), do: Map.put(m, k, v)

  defp invalid(msg), do: {:error, {:invalid_option, msg}}
end
