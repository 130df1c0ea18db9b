defmodule LemonMCP.Client.OAuth do
  @moduledoc false
  # The seed's `:oauth` start option -> the library's "auth" configuration
  # object (its `:token_store` passed through: the store's one form,
  # docs/configuration.md "The store"), handlers.authorization, and the
  # host side of the "authorize" request; `:store` (LemonMCP.Store) answers
  # the application's store. The callbacks themselves run in the client's
  # app-request processes (LemonMCP.Client.Server.serve_app_request/4),
  # never in its loop.

  alias LemonMCP.Error

  @oauth_keys ~w(client_id client_secret client_issuer token_auth_method scope scopes redirect_uri flow
                 refresh_token authorization_code_provider auth_code_provider client_metadata_url
                 client_name private_key_jwt authorization_timeout_ms max_step_ups allow_insecure_http
                 token_store dpop)a

  @methods %{
    client_secret_post: "client_secret_post",
    post: "client_secret_post",
    client_secret_basic: "client_secret_basic",
    basic: "client_secret_basic",
    none: "none",
    private_key_jwt: "private_key_jwt",
    auto: nil
  }

  @flows %{
    auto: "auto",
    client_credentials: "client_credentials",
    authorization_code: "authorization_code",
    authorization_code_pkce: "authorization_code",
    pkce: "authorization_code"
  }

  @default_authorization_timeout_ms 300_000

  @doc false
  # {:ok, auth_map | nil, handlers_to_add, callbacks, ready_ms_hint | nil} | {:error, reason}
  def build(opts) do
    with {:ok, oauth} <- normalize(Keyword.get(opts, :oauth)),
         :ok <- known(oauth),
         {:ok, provider} <- provider(oauth),
         :ok <- no_token_cache(opts),
         {:ok, store} <- app_store(opts[:store]),
         {:ok, auth} <- auth_object(oauth) do
      callbacks =
        %{}
        |> put_unless_nil(:authorization_code_provider, provider)
        |> put_unless_nil(:store, store)

      handlers = if provider, do: %{"authorization" => %{}}, else: %{}

      # The handshake includes an interactive authorization: unless the host
      # bounds it, give the provider its whole authorization timeout.
      ready_hint =
        if provider, do: Map.get(auth, "authorization_timeout_ms", @default_authorization_timeout_ms) + 30_000

      {:ok, if(auth == %{}, do: nil, else: auth), handlers, callbacks, ready_hint}
    end
  end

  # The seed took a keyword list or a string-keyed map (atom keys work too).
  defp normalize(nil), do: {:ok, %{}}

  defp normalize(opts) when is_list(opts) or is_map(opts) do
    Enum.reduce_while(opts, {:ok, %{}}, fn
      {k, v}, {:ok, acc} when is_atom(k) ->
        {:cont, {:ok, Map.put(acc, k, v)}}

      {k, v}, {:ok, acc} when is_binary(k) ->
        case Enum.find(@oauth_keys, &(Atom.to_string(&1) == k)) do
          nil -> {:halt, invalid("oauth.#{k} is not an OAuth option")}
          key -> {:cont, {:ok, Map.put(acc, key, v)}}
        end

      _other, _ ->
        {:halt, invalid("oauth must be a keyword list or a map of options")}
    end)
  end

  defp normalize(_), do: invalid("oauth must be a keyword list or a map")

  defp known(oauth) do
    case Map.keys(oauth) -- @oauth_keys do
      [] -> :ok
      [k | _] -> invalid("oauth.#{k} is not an OAuth option")
    end
  end

  defp provider(oauth) do
    case oauth[:authorization_code_provider] || oauth[:auth_code_provider] do
      nil -> {:ok, nil}
      f when is_function(f, 0) or is_function(f, 1) -> {:ok, f}
      _ -> invalid("oauth.authorization_code_provider must be a function of arity 0 or 1")
    end
  end

  # The token caches of earlier releases are retired: the application's
  # store is one pair for grants and pins alike.
  defp no_token_cache(opts) do
    case Enum.find([:oauth_token_cache, :oauth_token_loader, :oauth_token_persister], &(opts[&1] != nil)) do
      nil ->
        :ok

      old ->
        invalid(
          ":#{old} is retired: set oauth: [token_store: %{type: \"app\"}] and give store: {load, save}, " <>
            "which answers store_load / store_save (LemonMCP.Store, docs/migrating.md)"
        )
    end
  end

  defp app_store(nil), do: {:ok, nil}

  defp app_store(store) do
    if LemonMCP.Store.valid?(store),
      do: {:ok, store},
      else: invalid("store: expected {load, save} (functions of 2 and 4 arguments)")
  end

  defp auth_object(oauth) do
    with {:ok, auth} <-
           strings(
             oauth,
             ~w(client_id client_secret client_issuer redirect_uri refresh_token client_metadata_url client_name)a
           ),
         {:ok, auth} <- scopes(auth, oauth),
         {:ok, auth} <- method(auth, oauth),
         {:ok, auth} <- flow(auth, oauth),
         {:ok, auth} <- key(auth, oauth[:private_key_jwt]),
         {:ok, auth} <- integer(auth, oauth, :authorization_timeout_ms, 1),
         {:ok, auth} <- integer(auth, oauth, :max_step_ups, 0),
         {:ok, auth} <- boolean(auth, oauth, :allow_insecure_http),
         {:ok, auth} <- dpop(auth, oauth[:dpop]),
         {:ok, store} <- token_store(oauth[:token_store]) do
      {:ok, put_unless_nil(auth, "token_store", store)}
    end
  end

  # auth.token_store: the `:token_store` option (a map or keyword list)
  # goes to the library as its JSON object, keys and atom values as
  # strings, so the library's own validation names what is wrong in it (a
  # string form of an earlier release included).
  defp token_store(nil), do: {:ok, nil}
  defp token_store(store) when is_binary(store) or is_atom(store), do: {:ok, to_string(store)}

  defp token_store(store) when is_map(store) or is_list(store) do
    if Enum.all?(store, &match?({k, _} when is_atom(k) or is_binary(k), &1)) do
      {:ok, Map.new(store, fn {k, v} -> {to_string(k), store_value(v)} end)}
    else
      invalid("oauth.token_store must be a map such as %{type: \"file\", path: path}")
    end
  end

  defp token_store(_store),
    do: invalid("oauth.token_store must be a map such as %{type: \"file\", path: path}")

  defp store_value(v) when is_atom(v) and not is_boolean(v) and v != nil, do: Atom.to_string(v)
  defp store_value(v) when is_map(v), do: Map.new(v, fn {k, x} -> {to_string(k), store_value(x)} end)
  defp store_value(v), do: v

  # Empty strings count as absent, as in the seed (a client_id is
  # "usable" only when non-empty).
  defp strings(oauth, keys) do
    Enum.reduce_while(keys, {:ok, %{}}, fn k, {:ok, acc} ->
      case oauth[k] do
        v when v in [nil, ""] -> {:cont, {:ok, acc}}
        v when is_binary(v) -> {:cont, {:ok, Map.put(acc, Atom.to_string(k), v)}}
        _ -> {:halt, invalid("oauth.#{k} must be a string")}
      end
    end)
  end

  # The seed: oauth.scope (a space-separated string), else oauth.scopes
  # (a list); the library takes a list.
  defp scopes(auth, oauth) do
    case {oauth[:scope], oauth[:scopes]} do
      {s, _} when is_binary(s) and s != "" ->
        {:ok, Map.put(auth, "scopes", String.split(s))}

      {s, l} when s in [nil, ""] and is_list(l) and l != [] ->
        if Enum.all?(l, &(is_binary(&1) or is_atom(&1))),
          do: {:ok, Map.put(auth, "scopes", Enum.map(l, &to_string/1))},
          else: invalid("oauth.scopes must be a list of strings")

      {s, l} when s in [nil, ""] and l in [nil, []] ->
        {:ok, auth}

      {s, _} when not is_binary(s) and s != nil ->
        invalid("oauth.scope must be a space-separated string")

      _ ->
        invalid("oauth.scopes must be a list of strings")
    end
  end

  # The seed's default is client_secret_post whenever a secret is set;
  # :auto leaves the choice to the library (the server's metadata).
  defp method(auth, oauth) do
    case oauth[:token_auth_method] do
      nil ->
        if Map.has_key?(auth, "client_secret"),
          do: {:ok, Map.put(auth, "token_auth_method", "client_secret_post")},
          else: {:ok, auth}

      m when is_atom(m) or is_binary(m) ->
        key = if is_binary(m), do: Enum.find(Map.keys(@methods), &(Atom.to_string(&1) == m)), else: m

        case Map.fetch(@methods, key) do
          {:ok, nil} -> {:ok, auth}
          {:ok, v} -> {:ok, Map.put(auth, "token_auth_method", v)}
          :error -> bad_method(m)
        end

      m ->
        bad_method(m)
    end
  end

  defp bad_method(_m) do
    invalid(
      "oauth.token_auth_method must be :client_secret_post (:post), :client_secret_basic (:basic), :none, :private_key_jwt or :auto"
    )
  end

  defp flow(auth, oauth) do
    case oauth[:flow] do
      nil ->
        {:ok, auth}

      f when is_atom(f) or is_binary(f) ->
        key = if is_binary(f), do: Enum.find(Map.keys(@flows), &(Atom.to_string(&1) == f)), else: f

        case Map.fetch(@flows, key) do
          {:ok, v} -> {:ok, Map.put(auth, "flow", v)}
          :error -> bad_flow(f)
        end

      f ->
        bad_flow(f)
    end
  end

  defp bad_flow(_f),
    do: invalid("oauth.flow must be :auto, :client_credentials or :authorization_code (:pkce)")

  defp key(auth, nil), do: {:ok, auth}

  defp key(auth, k) when is_list(k) or is_map(k) do
    k = Enum.into(k, %{}, fn {kk, v} -> {to_string(kk), v} end)

    case Map.keys(k) -- ~w(key_pem kid alg) do
      [] ->
        if is_binary(k["key_pem"]) and Enum.all?(Map.values(k), &is_binary/1),
          do: {:ok, Map.put(auth, "private_key_jwt", k)},
          else: invalid("oauth.private_key_jwt needs key_pem (and optional kid, alg) as strings")

      [x | _] ->
        invalid("oauth.private_key_jwt.#{x} is not a key option (key_pem, kid, alg)")
    end
  end

  defp key(_auth, _), do: invalid("oauth.private_key_jwt must be [key_pem:, kid:, alg:]")

  # auth.dpop: true (an ephemeral key), false, or [key_pem:, alg:] (the key
  # to keep; a shared store needs it, the same in every process).
  defp dpop(auth, nil), do: {:ok, auth}
  defp dpop(auth, d) when is_boolean(d), do: {:ok, Map.put(auth, "dpop", d)}

  defp dpop(auth, d) when is_list(d) or is_map(d) do
    if Enum.all?(d, &match?({k, _} when is_atom(k) or is_binary(k), &1)) do
      d = Map.new(d, fn {k, v} -> {to_string(k), v} end)

      case Map.keys(d) -- ~w(key_pem alg) do
        [] ->
          if Enum.all?(Map.values(d), &is_binary/1),
            do: {:ok, Map.put(auth, "dpop", d)},
            else: invalid("oauth.dpop's key_pem and alg must be strings")

        [x | _] ->
          invalid("oauth.dpop.#{x} is not a DPoP option (key_pem, alg)")
      end
    else
      invalid("oauth.dpop must be true, false or [key_pem:, alg:]")
    end
  end

  defp dpop(_auth, _), do: invalid("oauth.dpop must be true, false or [key_pem:, alg:]")

  defp integer(auth, oauth, k, min) do
    case oauth[k] do
      nil -> {:ok, auth}
      n when is_integer(n) and n >= min -> {:ok, Map.put(auth, Atom.to_string(k), n)}
      _ -> invalid("oauth.#{k} must be an integer >= #{min}")
    end
  end

  defp boolean(auth, oauth, k) do
    case oauth[k] do
      nil -> {:ok, auth}
      b when is_boolean(b) -> {:ok, Map.put(auth, Atom.to_string(k), b)}
      _ -> invalid("oauth.#{k} must be a boolean")
    end
  end

  # ------------------------------------------------------ app requests

  @doc false
  # The provider's request map: the library's "authorize" payload with atom
  # keys (authorization_url, authorization_endpoint, issuer, client_id,
  # redirect_uri, scope, resource, state, code_challenge,
  # code_challenge_method, code_verifier).
  @request_keys ~w(authorization_url authorization_endpoint issuer client_id redirect_uri scope resource
                   state code_challenge code_challenge_method code_verifier)a

  def authorization_request(payload) when is_map(payload) do
    Map.new(payload, fn {k, v} ->
      {Enum.find(@request_keys, k, &(Atom.to_string(&1) == k)), v}
    end)
  end

  @doc false
  # {status, answer} for "authorize" from the provider's result. Every
  # accepted form carries the state (the library then checks it against
  # the request's): a bare code is refused.
  def authorize_answer({:ok, result}), do: authorize_answer(result)

  def authorize_answer(result) when is_map(result) do
    r = Map.new(result, fn {k, v} -> {to_string(k), v} end)

    cond do
      nonempty?(r["redirect_url"]) ->
        {0, %{"redirect_url" => r["redirect_url"]}}

      nonempty?(r["code"]) and nonempty?(r["state"]) ->
        {0, Map.take(r, ["code", "state"]) |> put_string(r, "iss")}

      nonempty?(r["error"]) and nonempty?(r["state"]) ->
        {0, Map.take(r, ["error", "state"]) |> put_string(r, "error_description") |> put_string(r, "iss")}

      nonempty?(r["code"]) or nonempty?(r["error"]) ->
        refuse("the authorization_code_provider's answer has no state")

      true ->
        refuse("the authorization_code_provider's answer has no code, redirect_url or error")
    end
  end

  def authorize_answer(code) when is_binary(code),
    do: refuse("the authorization_code_provider returned a bare code without its state")

  def authorize_answer({:error, _reason}), do: refuse("the authorization_code_provider failed")
  def authorize_answer(_other), do: refuse("the authorization_code_provider's answer is not {:ok, %{code:, state:}}")

  defp refuse(message), do: {Error.code(:auth_required), %{"message" => message}}

  defp nonempty?(v), do: is_binary(v) and v != ""

  defp put_string(m, r, k) do
    if nonempty?(r[k]), do: Map.put(m, k, r[k]), else: m
  end

  defp put_unless_nil(m, _k, nil), do: m
  defp put_unless_nil(m, k, v), do: Map.put(m, k, v)

  defp invalid(msg), do: {:error, {:invalid_option, msg}}
end
