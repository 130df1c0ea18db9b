defmodule LemonMCP.Test.OAuthFixture do
  @moduledoc false
  # The OAuth-protected HTTP fixture server (tests/fixtures/oauthfixture,
  # built by `make fixtures`): one process per test, owned by a port of the
  # test process, so it exits (stdin EOF) when the test ends. Its request
  # log (GET /_log) is what the tests assert on.

  @wait 10_000

  def path do
    p =
      System.get_env("LEMONMCP_OAUTH_FIXTURE") ||
        Path.expand("../../../../build/fixtures/oauthfixture", __DIR__)

    unless File.exists?(p) do
      raise "the OAuth fixture server is not built at #{p} (run `make fixtures`, or set LEMONMCP_OAUTH_FIXTURE)"
    end

    p
  end

  @doc "Starts a fixture server with the given flags; returns its base URL."
  def start!(args \\ []) do
    {:ok, _} = Application.ensure_all_started(:inets)
    port = Port.open({:spawn_executable, path()}, [:binary, :exit_status, {:line, 4096}, args: args])

    receive do
      {^port, {:data, {:eol, "http://" <> _ = base}}} -> base
      {^port, {:exit_status, status}} -> raise "oauthfixture exited with #{status}"
    after
      @wait -> raise "oauthfixture printed no base URL within #{@wait} ms"
    end
  end

  @doc "Every logged request (maps with string keys), oldest first."
  def log(base) do
    {:ok, {{_, 200, _}, _, body}} = get(base <> "/_log")
    {:ok, entries} = LemonMCP.NIF.decode_json(body)
    entries
  end

  @doc "Logged requests to one path."
  def log(base, path), do: Enum.filter(log(base), &(&1["path"] == path))

  @doc "Logged MCP POSTs of one JSON-RPC method."
  def rpc(base, method), do: Enum.filter(log(base, "/mcp"), &(&1["rpc_method"] == method))

  def reset(base) do
    {:ok, {{_, 204, _}, _, _}} =
      :httpc.request(:post, {String.to_charlist(base <> "/_log/reset"), [], ~c"text/plain", ""}, http_opts(),
        body_format: :binary
      )

    :ok
  end

  @doc "Header value of a logged request (nil when absent)."
  def header(entry, name), do: (entry["headers"] || %{})[name]

  @doc "A GET that does not follow redirects."
  def get(url) do
    :httpc.request(:get, {String.to_charlist(url), []}, http_opts(), body_format: :binary)
  end

  @doc """
  Plays the browser for an authorization request: GETs the authorization
  URL without following the redirect and returns the Location URL.
  """
  def browse(authorization_url) do
    {:ok, {{_, 302, _}, headers, _}} = get(authorization_url)
    {_, location} = Enum.find(headers, fn {k, _} -> :string.lowercase(k) == ~c"location" end)
    List.to_string(location)
  end

  @doc "The code and state of a redirect URL."
  def code_and_state(location) do
    q = URI.decode_query(URI.parse(location).query || "")
    %{code: q["code"], state: q["state"]}
  end

  defp http_opts, do: [timeout: @wait, connect_timeout: @wait, autoredirect: false]

  @doc "base64url without padding of SHA-256."
  def s256(verifier), do: Base.url_encode64(:crypto.hash(:sha256, verifier), padding: false)
end
