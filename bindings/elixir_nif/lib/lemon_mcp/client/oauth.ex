defmodule LemonMCP.Client.OAuth do
  @moduledoc false
  # The seed's `:oauth` and `:oauth_token_cache` start options -> the
  # library's "auth" configuration object, handlers.authorization and
  # auth.token_store: "app" for a token cache, or the `:token_store` option
  # passed through (a shared store, docs/configuration.md "Shared token
  # stores"), and
  # the host side of the "authorize", "token_load" and "token_save" host
  # requests, in the single-process form (load/0, save/1) and the versioned
  # one (load/1, save/3: the application's own shared store,
  # docs/app-requests.md). The callbacks themselves run in the client's
  # app-request processes (LemonMCP.Client.Server.serve_app_request/4),
  # never in its loop.

  alias LemonMCP.Error

  require Logger

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

  # The fields of a stored token record (auth.StoredToken) and their types.
  @record_strings ~w(access_token token_type refresh_token scope issuer resource client_id client_secret)
  @record_atoms Enum.map(@record_strings ++ ~w(expires_at metadata), &String.to_atom/1)

  @default_authorization_timeout_ms 300_000

  @doc false
  # {:ok, auth_map | nil, handlers_to_add, callbacks, ready_ms_hint | nil} | {:error, reason}
  def build(opts) do
    with {:ok, oauth} <- normalize(Keyword.get(opts, :oauth)),
         :ok <- known(oauth),
         {:ok, provider} <- provider(oauth),
         {:ok, cache} <- token_cache(opts),
         {:ok, auth} <- auth_object(oauth, cache) do
      callbacks =
        %{}
        |> put_unless_nil(:authorization_code_provider, provider)
        |> put_unless_nil(:token_load, cache[:load])
        |> put_unless_nil(:token_save, cache[:save])

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

  # oauth_token_cache: [load: fn/0, save: fn/1] (or a map), or a bare
  # loader, the single-process form; [load: fn/1, save: fn/3], the
  # versioned form (a shared store: both or neither). The compatibility
  # options only when it is absent.
  defp token_cache(opts) do
    {load, save} =
      case Keyword.get(opts, :oauth_token_cache) do
        nil -> {Keyword.get(opts, :oauth_token_loader), Keyword.get(opts, :oauth_token_persister)}
        f when is_function(f) -> {f, nil}
        c when is_list(c) or is_map(c) -> {cache_get(c, :load), cache_get(c, :save)}
        _ -> {:bad, nil}
      end

    cond do
      load == :bad ->
        invalid("oauth_token_cache must be [load: fun/0, save: fun/1] or [load: fun/1, save: fun/3]")

      is_function(load, 1) and is_function(save, 3) ->
        {:ok, %{load: load, save: save, versioned: true}}

      is_function(load, 1) or is_function(save, 3) ->
        invalid("the versioned token cache needs both load (arity 1) and save (arity 3)")

      load != nil and not is_function(load, 0) ->
        invalid("the token cache's load must be a function of arity 0 (or 1, with a save of arity 3)")

      save != nil and not is_function(save, 1) ->
        invalid("the token cache's save must be a function of arity 1 (or 3, with a load of arity 1)")

      true ->
        {:ok, %{} |> put_unless_nil(:load, load) |> put_unless_nil(:save, save)}
    end
  end

  defp cache_get(c, key) when is_list(c), do: Keyword.get(c, key)
  defp cache_get(c, key), do: Map.get(c, key) || Map.get(c, Atom.to_string(key))

  defp auth_object(oauth, cache) do
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
         {:ok, store} <- token_store(oauth[:token_store], cache) do
      {:ok, put_unless_nil(auth, "token_store", store)}
    end
  end

  # auth.token_store: the `:token_store` option (a map or keyword list, or
  # "memory" / "app") goes to the library as its JSON object, keys and atom
  # values as strings, so the library's own validation names what is wrong
  # in it. A token cache is the "app" store: it goes with a `:token_store`
  # of type "app" (which may add "key" and "lease_ms") and with none else,
  # and an "app" store needs the cache that answers its requests. A
  # versioned cache is always the object form ({"type": "app"}), the one in
  # which the library asks the versioned requests.
  defp token_store(nil, cache) when cache == %{}, do: {:ok, nil}
  defp token_store(nil, %{versioned: true}), do: {:ok, %{"type" => "app"}}
  defp token_store(nil, _cache), do: {:ok, "app"}

  defp token_store(store, cache) when is_binary(store) or is_atom(store) do
    case {to_string(store), cache} do
      {"app", %{versioned: true}} -> {:ok, %{"type" => "app"}}
      {s, _} -> check_store_type(s, s, cache)
    end
  end

  defp token_store(store, cache) when is_map(store) or is_list(store) do
    if Enum.all?(store, &match?({k, _} when is_atom(k) or is_binary(k), &1)) do
      object = Map.new(store, fn {k, v} -> {to_string(k), store_value(v)} end)
      check_store_type(object["type"], object, cache)
    else
      invalid("oauth.token_store must be a map such as %{type: \"file\", path: path}")
    end
  end

  defp token_store(_store, _cache),
    do: invalid("oauth.token_store must be a map such as %{type: \"file\", path: path}")

  defp store_value(v) when is_atom(v) and not is_boolean(v) and v != nil, do: Atom.to_string(v)
  defp store_value(v), do: v

  defp check_store_type("app", _store, cache) when cache == %{},
    do: invalid("oauth.token_store \"app\" needs :oauth_token_cache (its load and save)")

  # The object form is the shared-store contract (compare-and-save): an
  # old load/0, save/1 cache cannot keep it, and answering its saves as
  # done would let two processes redeem one refresh token.
  defp check_store_type("app", store, cache) when is_map(store) and not is_map_key(cache, :versioned),
    do:
      invalid(
        "oauth.token_store %{type: \"app\"} is the shared store: it needs oauth_token_cache: " <>
          "[load: fun/1, save: fun/3] (a [load: fun/0, save: fun/1] cache goes with token_store: \"app\")"
      )

  defp check_store_type("app", store, _cache), do: {:ok, store}
  defp check_store_type(_type, store, cache) when cache == %{}, do: {:ok, store}

  defp check_store_type(_type, _store, _cache),
    do: invalid("oauth.token_store conflicts with :oauth_token_cache (the \"app\" store); give one of them")

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

  @doc false
  # The "token_load" answer from the host's load result: map or {:ok, map},
  # atom or string keys; accepted when it has a non-empty access or refresh
  # token, else nothing is stored ({}).
  def load_answer({:ok, record}), do: load_answer(record)

  def load_answer(record) when is_map(record) do
    r =
      Enum.reduce(record, %{}, fn {k, v}, acc ->
        key = to_string(k)

        cond do
          key in @record_strings and nonempty?(v) -> Map.put(acc, key, v)
          key == "expires_at" and is_integer(v) and v > 0 -> Map.put(acc, key, v)
          key == "metadata" and is_map(v) -> Map.put(acc, key, v)
          true -> acc
        end
      end)

    if Map.has_key?(r, "access_token") or Map.has_key?(r, "refresh_token"), do: r, else: %{}
  end

  def load_answer(_other), do: %{}

  @doc false
  # What the host's save gets: the library's record with atom keys for the
  # record's own fields (access_token, refresh_token, metadata, token_type,
  # expires_at, scope, issuer, resource, client_id, client_secret); the
  # metadata keeps the server's string keys. access_token, refresh_token
  # and metadata are always present (nil when absent).
  def save_record(payload) when is_map(payload) do
    base = %{access_token: nil, refresh_token: nil, metadata: nil}

    Enum.reduce(payload, base, fn {k, v}, acc ->
      atom = Enum.find(@record_atoms, &(Atom.to_string(&1) == k))
      Map.put(acc, atom || k, v)
    end)
  end

  @doc false
  # The versioned "token_load" answer from load.(key): {record, version}
  # (version >= 1) or nil (nothing stored: {"version": 0}). Anything else,
  # a raise or a throw is an error status: a failed load fails that refresh
  # (the library never refreshes on a store it could not read).
  def versioned_load(load, payload) do
    case guarded(fn -> load.(payload["key"]) end, "load") do
      nil ->
        {0, %{"version" => 0}}

      {_record, 0} ->
        {0, %{"version" => 0}}

      {record, version} when is_map(record) and is_integer(version) and version > 0 ->
        {0, %{"version" => version, "record" => string_keys(record)}}

      :failed ->
        store_failed("load")

      _other ->
        unexpected("load", "{record, version} nor nil")
    end
  end

  @doc false
  # The versioned "token_save" answer from save.(key, record,
  # expected_version), a compare-and-save: {:ok, new_version} (above
  # expected_version) when saved, {:conflict, stored_record, stored_version}
  # when the key's version is no longer the expected one. Anything else, a
  # raise or a throw is an error status (that refresh fails).
  def versioned_save(save, payload) do
    {key, payload} = Map.pop(payload, "key")
    {expected, record} = Map.pop(payload, "expected_version", 0)

    case guarded(fn -> save.(key, record, expected) end, "save") do
      {:ok, version} when is_integer(version) and version > expected ->
        {0, %{"version" => version}}

      {:conflict, nil, 0} ->
        {0, %{"conflict" => true, "version" => 0}}

      {:conflict, stored, version} when is_map(stored) and is_integer(version) and version > 0 ->
        {0, %{"conflict" => true, "version" => version, "record" => string_keys(stored)}}

      :failed ->
        store_failed("save")

      _other ->
        unexpected("save", "{:ok, version above expected_version} nor {:conflict, record, version}")
    end
  end

  # A store callback's raise or throw. Its message is not logged: it may
  # repeat a token.
  defp guarded(f, what) do
    f.()
  rescue
    e ->
      Logger.warning("lemon_mcp: the token cache's #{what} raised #{inspect(e.__struct__)}")
      :failed
  catch
    kind, _ ->
      Logger.warning("lemon_mcp: the token cache's #{what} failed (#{kind})")
      :failed
  end

  # The values are not logged: a record holds tokens.
  defp unexpected(what, expected) do
    Logger.warning("lemon_mcp: the token cache's #{what} returned neither #{expected}")
    store_failed(what)
  end

  defp store_failed(what), do: {Error.code(:internal), %{"message" => "the token cache's #{what} failed"}}

  # A record given back as stored: atom or string keys (a lease is a map too).
  defp string_keys(m) when is_map(m), do: Map.new(m, fn {k, v} -> {to_string(k), string_keys(v)} end)
  defp string_keys(v), do: v

  defp put_unless_nil(m, _k, nil), do: m
  defp put_unless_nil(m, k, v), do: Map.put(m, k, v)

  defp invalid(msg), do: {:error, {:invalid_option, msg}}
end
