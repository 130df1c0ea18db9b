defmodule LemonMCP.OAuthTest do
  # The seed's OAuth items (10-17) against tests/fixtures/oauthfixture, plus
  # what the seed did not check: every provider answer carries its state,
  # the redirect_url answer, callbacks in their own processes, swallowed
  # token cache failures. Assertions are on the fixture's request log.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.OAuthFixture, as: OF

  @redirect "http://127.0.0.1:8765/callback"
  @start [timeout: 15_000]

  defp start(base, opts), do: Client.HTTP.start_link([url: base <> "/mcp"] ++ @start ++ opts)

  defp trap(fun) do
    Process.flag(:trap_exit, true)
    result = fun.()
    refute_receive {:EXIT, _, _}, 50
    result
  end

  defp token_requests(base), do: OF.log(base, "/oauth/token")
  defp issued(entry), do: entry["issued"]["access_token"]
  defp bearer(entry), do: OF.header(entry, "authorization")

  # A provider that plays the browser and answers with code and state.
  defp browser(me) do
    fn req ->
      answer = OF.code_and_state(OF.browse(req.authorization_url))
      send(me, {:provider, self(), req, answer})
      {:ok, answer}
    end
  end

  test "10: a 401 without OAuth options fails the start with {:auth_required, metadata}" do
    base = OF.start!()
    assert {:error, {:auth_required, md}} = trap(fn -> start(base, []) end)

    assert md["resource"] == base <> "/mcp"
    assert md["authorization_servers"] == [base <> "/oauth"]
    assert md["resource_metadata_url"] == base <> "/.well-known/oauth-protected-resource/mcp"
    assert md["www_authenticate"] =~ ~s(resource_metadata="#{base}/.well-known/oauth-protected-resource/mcp")
    assert [as | _] = md["authorization_server_metadata"]
    assert as["issuer"] == base <> "/oauth"
    assert as["authorization_endpoint"] == base <> "/oauth/authorize"
    assert as["token_endpoint"] == base <> "/oauth/token"
    assert as["registration_endpoint"] == base <> "/oauth/register"
    assert as["metadata_url"] == base <> "/.well-known/oauth-authorization-server/oauth"
    refute inspect(md) =~ "at-"
    assert token_requests(base) == []
  end

  test "11: client credentials: metadata GETs carry no authorization; the token form; the bearer is used" do
    base = OF.start!()

    assert {:ok, c} =
             start(base,
               oauth: [client_id: "lemon", client_secret: "secret", scope: "tools prompts"],
               headers: [{"x-extra", "1"}]
             )

    assert {:ok, _} = Client.HTTP.list_tools(c)

    prm = OF.log(base, "/.well-known/oauth-protected-resource/mcp")
    asm = OF.log(base, "/.well-known/oauth-authorization-server/oauth")
    assert [_ | _] = prm
    assert [_ | _] = asm
    for e <- prm ++ asm, do: assert(bearer(e) == nil)

    assert [tok] = token_requests(base)

    assert %{
             "grant_type" => "client_credentials",
             "client_id" => "lemon",
             "client_secret" => "secret",
             "resource" => resource,
             "scope" => "tools prompts"
           } = tok["form"]

    assert resource == base <> "/mcp"
    with_bearer = Enum.filter(OF.log(base, "/mcp"), &(bearer(&1) == "Bearer " <> issued(tok)))
    assert length(with_bearer) >= 2
    assert "tools/list" in Enum.map(with_bearer, & &1["rpc_method"])
  end

  test "12: expiry without a refresh token: exactly one more client-credentials grant, and the retry succeeds" do
    base = OF.start!(["-no-refresh", "-expire-method", "tools/list"])
    {:ok, c} = start(base, oauth: [client_id: "lemon", client_secret: "secret"])
    assert {:ok, [_ | _]} = Client.HTTP.list_tools(c)

    assert [t1, t2] = token_requests(base)
    assert t1["form"]["grant_type"] == "client_credentials"
    assert t2["form"]["grant_type"] == "client_credentials"
    assert [first, retry] = OF.rpc(base, "tools/list")
    assert {first["status"], bearer(first)} == {401, "Bearer " <> issued(t1)}
    assert {retry["status"], bearer(retry)} == {200, "Bearer " <> issued(t2)}
  end

  test "13: refresh preferred: client_credentials, then refresh_token (refresh-one, with resource)" do
    base = OF.start!(["-refresh-token", "refresh-one", "-expire-method", "tools/list"])
    {:ok, c} = start(base, oauth: [client_id: "lemon", client_secret: "secret"])
    assert {:ok, [_ | _]} = Client.HTTP.list_tools(c)

    assert [t1, t2] = token_requests(base)
    assert t1["form"]["grant_type"] == "client_credentials"
    assert %{"grant_type" => "refresh_token", "refresh_token" => "refresh-one", "resource" => res} = t2["form"]
    assert res == base <> "/mcp"
    bearers = OF.rpc(base, "tools/list") |> Enum.map(&bearer/1)
    assert bearers == ["Bearer " <> issued(t1), "Bearer " <> issued(t2)]
    # Not rotating: the next expiry refreshes with the same refresh token.
  end

  test "14: client_secret_basic: the Basic header, no client_id or client_secret in the form" do
    base = OF.start!()

    {:ok, c} =
      start(base, oauth: %{"client_id" => "lemon", "client_secret" => "secret", "token_auth_method" => "basic"})

    assert {:ok, _} = Client.HTTP.list_tools(c)
    assert [tok] = token_requests(base)
    assert OF.header(tok, "authorization") == "Basic " <> Base.encode64("lemon:secret")
    refute Map.has_key?(tok["form"], "client_id")
    refute Map.has_key?(tok["form"], "client_secret")
    assert tok["status"] == 200
  end

  test "15: PKCE with a provider: every request field, S256, the token form, the new bearer" do
    base = OF.start!(["-client-secret", ""])
    me = self()

    {:ok, c} =
      start(base,
        oauth: [
          client_id: "lemon",
          redirect_uri: @redirect,
          scope: "tools prompts",
          authorization_code_provider: browser(me)
        ]
      )

    assert {:ok, _} = Client.HTTP.list_tools(c)
    assert_received {:provider, ppid, req, %{code: code}}
    assert ppid != c

    assert req.authorization_endpoint == base <> "/oauth/authorize"
    assert req.client_id == "lemon"
    assert req.redirect_uri == @redirect
    assert req.scope == "tools prompts"
    assert req.resource == base <> "/mcp"
    assert req.code_challenge_method == "S256"
    assert is_binary(req.state) and byte_size(req.state) >= 16
    assert is_binary(req.code_verifier) and byte_size(req.code_verifier) >= 43
    assert req.code_challenge == OF.s256(req.code_verifier)

    q = URI.decode_query(URI.parse(req.authorization_url).query)

    assert %{
             "response_type" => "code",
             "client_id" => "lemon",
             "redirect_uri" => @redirect,
             "state" => state,
             "code_challenge" => challenge,
             "code_challenge_method" => "S256",
             "scope" => "tools prompts",
             "resource" => resource
           } = q

    assert {state, challenge, resource} == {req.state, req.code_challenge, req.resource}

    assert [_] = OF.log(base, "/oauth/authorize")
    assert [tok] = token_requests(base)

    assert %{
             "grant_type" => "authorization_code",
             "code" => ^code,
             "code_verifier" => verifier,
             "redirect_uri" => @redirect,
             "resource" => ^resource
           } = tok["form"]

    assert verifier == req.code_verifier
    # The seed also sent scope with the code exchange; RFC 6749 §4.1.3 has
    # no scope there, so it may be absent, but never another value.
    assert tok["form"]["scope"] in [nil, "tools prompts"]
    assert tok["status"] == 200
    assert [%{"status" => 200} = list] = OF.rpc(base, "tools/list")
    assert bearer(list) == "Bearer " <> issued(tok)
  end

  test "15b: the provider may answer with the redirect URL; arity 0 works (and fails without the state)" do
    base = OF.start!(["-client-secret", ""])

    provider = fn req -> {:ok, %{redirect_url: OF.browse(req.authorization_url)}} end
    {:ok, c} = start(base, oauth: [client_id: "lemon", redirect_uri: @redirect, auth_code_provider: provider])
    assert {:ok, _} = Client.HTTP.list_tools(c)
    assert [%{"status" => 200, "form" => %{"grant_type" => "authorization_code"}}] = token_requests(base)

    # An arity-0 provider knows no state: it can only refuse or guess.
    assert {:error, {:auth_required, _}} =
             trap(fn ->
               start(base,
                 oauth: [
                   client_id: "lemon",
                   redirect_uri: @redirect,
                   authorization_code_provider: fn -> {:ok, %{code: "c"}} end
                 ]
               )
             end)
  end

  test "16: the application's store keeps the grant; a second client resumes without a token request" do
    base = OF.start!()
    {agent, load, save} = agent_store()
    oauth = [client_id: "lemon", client_secret: "secret", token_store: %{type: "app"}]
    {:ok, c1} = start(base, oauth: oauth, store: {load, save})
    [tok] = token_requests(base)
    assert [{{"grants", _key}, {%{"body" => rec}, _version}}] = Map.to_list(Agent.get(agent, & &1))
    assert rec["access_token"] == issued(tok)
    assert rec["refresh_token"] == tok["issued"]["refresh_token"]
    assert rec["resource"] == base <> "/mcp"
    Client.HTTP.stop(c1)

    OF.reset(base)
    {:ok, c2} = start(base, oauth: oauth, store: {load, save})
    assert {:ok, _} = Client.HTTP.list_tools(c2)
    assert token_requests(base) == []
    assert [init] = OF.rpc(base, "initialize")
    assert bearer(init) == "Bearer " <> rec["access_token"]
    Client.HTTP.stop(c2)
  end

  test "16b: the token caches of earlier releases are retired with what to write instead" do
    base = OF.start!()

    for old <- [:oauth_token_cache, :oauth_token_loader, :oauth_token_persister] do
      assert {:error, {:invalid_option, msg}} =
               trap(fn -> start(base, [{:oauth, [client_id: "lemon"]}, {old, [load: fn -> nil end]}]) end)

      assert msg =~ ":#{old} is retired"
      assert msg =~ "store: {load, save}"
    end
  end

  test "17: a provider answering a mismatched state fails the start with {:auth_required, metadata}" do
    base = OF.start!(["-client-secret", ""])

    provider = fn req ->
      %{code: code} = OF.code_and_state(OF.browse(req.authorization_url))
      {:ok, %{"code" => code, "state" => req.state <> "x"}}
    end

    assert {:error, {:auth_required, md}} =
             trap(fn ->
               start(base, oauth: [client_id: "lemon", redirect_uri: @redirect, authorization_code_provider: provider])
             end)

    assert md["resource"] == base <> "/mcp"
    assert token_requests(base) == []
  end

  test "a provider answer without its state is refused in every form (the seed accepted a bare code)" do
    base = OF.start!(["-client-secret", ""])

    forms = [
      fn code, _state -> {:ok, code} end,
      fn code, _state -> code end,
      fn code, _state -> {:ok, %{code: code}} end,
      fn code, _state -> %{"code" => code, "state" => ""} end,
      fn _code, _state -> {:error, :user_cancelled} end,
      fn _code, _state -> raise "provider crashed" end,
      fn _code, _state -> :what end
    ]

    for form <- forms do
      OF.reset(base)

      provider = fn req ->
        %{code: code, state: state} = OF.code_and_state(OF.browse(req.authorization_url))
        form.(code, state)
      end

      assert {:error, {:auth_required, %{"resource" => _}}} =
               trap(fn ->
                 start(base, oauth: [client_id: "lemon", redirect_uri: @redirect, authorization_code_provider: provider])
               end)

      assert token_requests(base) == [], "no code was exchanged"
    end

    # The same code with its state is accepted (the forms above fail only for the state).
    OF.reset(base)

    {:ok, _} =
      start(base,
        oauth: [
          client_id: "lemon",
          redirect_uri: @redirect,
          authorization_code_provider: fn req -> {:ok, OF.code_and_state(OF.browse(req.authorization_url))} end
        ]
      )
  end

  test "the provider runs in its own process: a slow provider does not block state/1" do
    base = OF.start!(["-client-secret", ""])
    me = self()
    name = :"oauth_slow_#{System.unique_integer([:positive])}"

    # The provider answers only once state/1 has: were it to run inside the
    # client's process, state/1 could not answer before the provider's own
    # 60 s wait ran out, long past state/1's timeout.
    provider = fn req ->
      send(me, {:waiting, self()})

      receive do
        :go -> {:ok, OF.code_and_state(OF.browse(req.authorization_url))}
      after
        60_000 -> {:error, :not_released}
      end
    end

    starter =
      Task.async(fn ->
        start(base,
          name: name,
          oauth: [client_id: "lemon", redirect_uri: @redirect, authorization_code_provider: provider]
        )
      end)

    assert_receive {:waiting, ppid}, 10_000
    assert Client.HTTP.state(name, 10_000) == :initializing
    assert ppid != Process.whereis(name)
    send(ppid, :go)
    assert {:ok, c} = Task.await(starter, 15_000)
    assert Client.HTTP.state(c) == :ready
    # It was linked to the task, which exited normally: stop it here.
    Client.HTTP.stop(c)
  end

  defp strict_stats(base) do
    {:ok, {{_, 200, _}, _, body}} = OF.get(base <> "/_strict")
    {:ok, stats} = LemonMCP.NIF.decode_json(body)
    stats
  end

  @tag :tmp_dir
  test "oauth.token_store: a second client adopts the token the first stored in a shared file store",
       %{tmp_dir: dir} do
    # Single-use refresh tokens: redeeming rt-0 twice would revoke the grant.
    base = OF.start!(["-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret="])
    store = %{type: "file", path: Path.join(dir, "tokens.json")}
    oauth = [client_id: "lemon", refresh_token: "rt-0", token_store: store]

    {:ok, c1} = start(base, oauth: oauth)
    assert {:ok, _} = Client.HTTP.list_tools(c1)
    assert [%{"form" => %{"grant_type" => "refresh_token", "refresh_token" => "rt-0"}} = tok] = token_requests(base)
    assert File.read!(store.path) =~ issued(tok)

    # A string-keyed map reaches the library the same way.
    string_keyed = Map.new(store, fn {k, v} -> {Atom.to_string(k), v} end)
    {:ok, c2} = start(base, oauth: %{"client_id" => "lemon", "refresh_token" => "rt-0", "token_store" => string_keyed})
    assert {:ok, _} = Client.HTTP.list_tools(c2)

    assert [_] = token_requests(base), "the second client redeemed the refresh token again"
    assert %{"redemptions" => 1, "reuses" => 0, "revocations" => 0} = strict_stats(base)
    assert Enum.all?(OF.log(base, "/mcp"), &(bearer(&1) in [nil, "Bearer " <> issued(tok)]))
    assert length(OF.rpc(base, "tools/list")) == 2
  end

  @tag :tmp_dir
  test "oauth.token_store: after a 401, the client that did not refresh adopts the other's new token",
       %{tmp_dir: dir} do
    # The first tools/list revokes the access token both clients hold.
    base =
      OF.start!(["-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret=", "-expire-method", "tools/list"])

    oauth = [client_id: "lemon", refresh_token: "rt-0", token_store: [type: :file, path: Path.join(dir, "tokens.json")]]
    {:ok, c1} = start(base, oauth: oauth)
    {:ok, c2} = start(base, oauth: oauth)
    assert [t1] = token_requests(base)

    # c1 meets the 401 and redeems the rotated refresh token; c2 then meets
    # its own 401 and takes c1's token from the store.
    assert {:ok, _} = Client.HTTP.list_tools(c1)
    assert [^t1, t2] = token_requests(base)
    assert t2["form"]["refresh_token"] == t1["issued"]["refresh_token"]
    assert {:ok, _} = Client.HTTP.list_tools(c2)

    assert [_, _] = token_requests(base), "the second client redeemed a refresh token itself"
    assert %{"redemptions" => 2, "reuses" => 0, "revocations" => 0} = strict_stats(base)
    assert [401, 200, 401, 200] = Enum.map(OF.rpc(base, "tools/list"), & &1["status"])
    assert "Bearer " <> issued(t2) == bearer(List.last(OF.rpc(base, "tools/list")))
  end

  test "oauth.token_store: a bad store or a retired form is a clear error" do
    base = OF.start!()

    for {extra, message} <- [{[token_store: 42], ~r/must be a map/}, {[token_store: [{1, 2}]], ~r/must be a map/}] do
      assert {:error, {:invalid_option, msg}} =
               trap(fn -> start(base, oauth: [client_id: "lemon", client_secret: "secret"] ++ extra) end)

      assert msg =~ message
    end

    assert {:error, {:invalid_option, msg}} =
             trap(fn -> start(base, oauth: [client_id: "lemon"], store: {fn -> nil end, fn _ -> :ok end}) end)

    assert msg =~ "store: expected {load, save}"

    # What is wrong inside the object, or a retired form, the library names.
    for {store, want} <- [{%{type: "disk"}, "token_store"}, {"app", "is retired: write"}, {:app, "is retired: write"}] do
      assert {:error, reason} = trap(fn -> start(base, oauth: [client_id: "lemon", token_store: store]) end)
      assert inspect(reason) =~ want
    end
  end

  # The application's own store, as its database would keep it:
  # {document, version} per collection and key in an Agent, saved by
  # compare-and-save. The :store (load/2, save/4) of every client sharing it.
  defp agent_store do
    agent = start_supervised!({Agent, fn -> %{} end}, id: make_ref())
    load = fn c, k -> {:ok, Agent.get(agent, &Map.get(&1, {c, k}))} end

    save = fn c, k, expected, doc ->
      Agent.get_and_update(agent, fn docs ->
        case Map.get(docs, {c, k}) do
          {_, ^expected} -> {{:ok, expected + 1}, Map.put(docs, {c, k}, {doc, expected + 1})}
          nil when expected == 0 -> {{:ok, 1}, Map.put(docs, {c, k}, {doc, 1})}
          {stored, version} -> {{:conflict, stored, version}, docs}
          nil -> {{:conflict, nil, 0}, docs}
        end
      end)
    end

    {agent, load, save}
  end

  # The strict server: single-use refresh tokens (a reuse revokes the
  # grant); the first tools/list revokes the access token every client holds.
  defp strict_expiring,
    do:
      OF.start!(["-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret=", "-expire-method", "tools/list"])

  test ":store: clients sharing the application's store redeem once when their token dies" do
    base = strict_expiring()
    {agent, load, save} = agent_store()
    oauth = [client_id: "lemon", refresh_token: "rt-0", token_store: %{type: "app"}]
    {:ok, c1} = start(base, oauth: oauth, store: {load, save})
    {:ok, c2} = start(base, oauth: oauth, store: {load, save})
    assert [t1] = token_requests(base), "the second client redeemed rt-0 again"
    assert [{key, {%{"body" => %{"generation" => generation}}, version}}] = Map.to_list(Agent.get(agent, & &1))

    # Both meet the 401 of their shared, revoked token at once: one
    # redeems, the other adopts what it stored.
    calls = for c <- [c1, c2], do: Task.async(fn -> Client.HTTP.list_tools(c) end)
    assert [{:ok, _}, {:ok, _}] = Task.await_many(calls, 60_000)

    assert [^t1, t2] = token_requests(base), "both clients redeemed a refresh token"
    assert t2["form"]["refresh_token"] == t1["issued"]["refresh_token"]
    assert %{"redemptions" => 2, "reuses" => 0, "revocations" => 0} = strict_stats(base)

    # One grant, under the library's default key: one generation more, the
    # winner's tokens.
    assert [{^key, {%{"body" => record}, new_version}}] = Map.to_list(Agent.get(agent, & &1))
    assert record["access_token"] == issued(t2)
    assert record["generation"] == generation + 1
    assert new_version > version
    assert "Bearer " <> issued(t2) == bearer(List.last(OF.rpc(base, "tools/list")))
  end

  test ":store: a conflict answer makes the loser adopt the winner's record" do
    base = strict_expiring()
    {_agent, load, save} = agent_store()
    me = self()
    gate = start_supervised!({Agent, fn -> :open end}, id: :gate)

    # c2's next save waits, before its compare, for the test's :go.
    gated_save = fn c, k, expected, doc ->
      if Agent.get_and_update(gate, &{&1, :open}) == :armed do
        send(me, {:c2_saving, self()})

        receive do
          :go -> :ok
        end
      end

      answer = save.(c, k, expected, doc)
      send(me, {:c2_saved, answer})
      answer
    end

    oauth = [client_id: "lemon", refresh_token: "rt-0", token_store: %{type: "app", key: "user-42"}]
    {:ok, c1} = start(base, oauth: oauth, store: {load, save})
    {:ok, c2} = start(base, oauth: oauth, store: {load, gated_save})
    assert [t1] = token_requests(base)

    # c2 meets the 401 and claims the refresh lease; its claim waits while
    # c1 meets its own 401, claims, redeems and commits.
    Agent.update(gate, fn _ -> :armed end)
    call2 = Task.async(fn -> Client.HTTP.list_tools(c2) end)
    assert_receive {:c2_saving, saver}, 30_000
    assert {:ok, _} = Client.HTTP.list_tools(c1)
    assert [^t1, t2] = token_requests(base)

    # c2's claim now meets c1's commit: the conflict gives c2 the record
    # that won, and c2 uses its token without redeeming anything.
    send(saver, :go)
    assert_receive {:c2_saved, {:conflict, winner, _version}}, 30_000
    assert winner["body"]["access_token"] == issued(t2)
    assert {:ok, _} = Task.await(call2, 60_000)

    assert [^t1, ^t2] = token_requests(base), "the loser redeemed a refresh token"
    assert %{"redemptions" => 2, "reuses" => 0, "revocations" => 0} = strict_stats(base)
    assert "Bearer " <> issued(t2) == bearer(List.last(OF.rpc(base, "tools/list")))
  end

  test ":store: a failing load or save fails the request without a token request or a secret" do
    base = OF.start!()
    oauth = [client_id: "lemon", client_secret: "secret", token_store: %{type: "app"}]

    for store <- [
          {fn _, _ -> raise "db down s3cret" end, fn _, _, _, _ -> {:ok, 1} end},
          {fn _, _ -> {:ok, nil} end, fn _, _, _, _ -> :saved end},
          {fn _, _ -> :garbage end, fn _, _, _, _ -> {:ok, 1} end},
          {fn _, _ -> {:error, "s3cret"} end, fn _, _, _, _ -> {:ok, 1} end}
        ] do
      assert {:error, reason} = trap(fn -> start(base, oauth: oauth, store: store) end)
      refute inspect(reason) =~ "s3cret"
    end

    assert token_requests(base) == [], "a token was requested without a working store"
  end

  # A P-256 key as a SEC 1 PEM, and its public point's x and y.
  defp ec_key do
    key = :public_key.generate_key({:namedCurve, :secp256r1})
    <<4, x::binary-size(32), y::binary-size(32)>> = elem(key, 4)
    {:public_key.pem_encode([:public_key.pem_entry_encode(:ECPrivateKey, key)]), x, y}
  end

  defp jwt_part(part), do: LemonMCP.NIF.decode_json(Base.url_decode64!(part, padding: false))

  test "oauth.dpop: tokens bound to the configured key, with its proofs; bad options are refused" do
    # -dpop: the fixture binds every token to the key of the token
    # request's proof and takes it only as DPoP with a proof of that key.
    base = OF.start!(["-dpop"])
    {pem, x, y} = ec_key()

    {:ok, c} = start(base, oauth: [client_id: "lemon", client_secret: "secret", dpop: [key_pem: pem, alg: "ES256"]])
    assert {:ok, _} = Client.HTTP.list_tools(c)
    assert [tok] = token_requests(base)
    assert [header, claims, _signature] = String.split(OF.header(tok, "dpop") || "", ".")
    assert {:ok, header} = jwt_part(header)
    assert {:ok, claims} = jwt_part(claims)
    assert %{"typ" => "dpop+jwt", "alg" => "ES256", "jwk" => %{"kty" => "EC", "crv" => "P-256"} = jwk} = header
    assert {jwk["x"], jwk["y"]} == {Base.url_encode64(x, padding: false), Base.url_encode64(y, padding: false)}
    assert %{"htm" => "POST", "htu" => htu} = claims
    assert htu == base <> "/oauth/token"
    assert tok["issued"]["token_type"] == "DPoP"
    [list] = OF.rpc(base, "tools/list")
    assert bearer(list) == "DPoP " <> issued(tok)
    assert {:ok, %{"ath" => _, "htu" => mcp_url}} = jwt_part(Enum.at(String.split(OF.header(list, "dpop"), "."), 1))
    assert mcp_url == base <> "/mcp"

    # An ephemeral key (dpop: true) signs too; a map works as the list does.
    OF.reset(base)
    {:ok, c} = start(base, oauth: %{"client_id" => "lemon", "client_secret" => "secret", "dpop" => true})
    assert {:ok, _} = Client.HTTP.list_tools(c)
    assert [tok] = token_requests(base)
    assert tok["issued"]["token_type"] == "DPoP"

    # Without dpop the fixture refuses the token request.
    assert {:error, _} = trap(fn -> start(base, oauth: [client_id: "lemon", client_secret: "secret"]) end)

    for {dpop, message} <- [
          {"yes", ~r/oauth.dpop must be/},
          {[kid: "k"], ~r/oauth.dpop.kid is not a DPoP option/},
          {[key_pem: 42], ~r/must be strings/}
        ] do
      assert {:error, {:invalid_option, msg}} =
               trap(fn -> start(base, oauth: [client_id: "lemon", client_secret: "secret", dpop: dpop]) end)

      assert msg =~ message
    end

    # What the library checks, it names: an algorithm it does not sign with.
    assert {:error, reason} =
             trap(fn -> start(base, oauth: [client_id: "lemon", client_secret: "secret", dpop: [alg: "HS256"]]) end)

    assert inspect(reason) =~ "dpop.alg"
  end

  @tag :tmp_dir
  test "oauth.dpop with a shared store: clients given the same key share the DPoP-bound grant; another key does not",
       %{tmp_dir: dir} do
    base = OF.start!(["-dpop", "-strict-refresh", "-initial-refresh-token", "rt-0", "-client-secret="])
    {pem, x, y} = ec_key()
    store = %{type: "file", path: Path.join(dir, "tokens.json")}
    oauth = [client_id: "lemon", refresh_token: "rt-0", token_store: store, dpop: [key_pem: pem]]

    {:ok, c1} = start(base, oauth: oauth)
    {:ok, c2} = start(base, oauth: oauth)
    assert {:ok, _} = Client.HTTP.list_tools(c1)
    assert {:ok, _} = Client.HTTP.list_tools(c2)
    assert [tok] = token_requests(base), "the second client redeemed rt-0 again"
    assert Enum.all?(OF.rpc(base, "tools/list"), &(bearer(&1) == "DPoP " <> issued(tok)))

    # The record names the key's thumbprint (RFC 7638).
    jwk =
      ~s({"crv":"P-256","kty":"EC","x":"#{Base.url_encode64(x, padding: false)}","y":"#{Base.url_encode64(y, padding: false)}"})

    assert File.read!(store.path) =~ Base.url_encode64(:crypto.hash(:sha256, jwk), padding: false)

    # A client with another key neither uses the grant nor redeems it.
    {other, _, _} = ec_key()

    assert {:error, {:auth_required, _}} = trap(fn -> start(base, oauth: Keyword.put(oauth, :dpop, key_pem: other)) end)

    assert [^tok] = token_requests(base)
    assert %{"redemptions" => 1, "reuses" => 0, "revocations" => 0, "refused" => 0} = strict_stats(base)
  end

  test "a 401 mid-session with no way to re-authorize is {:auth_required, metadata} for that call" do
    base = OF.start!(["-no-refresh", "-expire-method", "tools/list"])
    {_agent, load, save} = agent_store()
    app = %{type: "app"}
    {:ok, c1} = start(base, oauth: [client_id: "lemon", client_secret: "secret", token_store: app], store: {load, save})
    Client.HTTP.stop(c1)

    # A public client holding only the stored access token: no refresh
    # token, no secret, no provider.
    {:ok, c} = start(base, oauth: [client_id: "lemon", token_store: app], store: {load, save})
    assert {:error, {:auth_required, md}} = Client.HTTP.list_tools(c)
    assert md["resource"] == base <> "/mcp"
    assert Client.HTTP.state(c) == :ready
    assert length(token_requests(base)) == 1
  end
end
