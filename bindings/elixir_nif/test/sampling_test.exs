defmodule LemonMCP.SamplingTest do
  # Sampling over stdio (seed items 6, 7, 19-21, 23): the fixture's `sample`
  # tool sends sampling/createMessage with one user message (the prompt)
  # and maxTokens, and returns the client's answer as JSON text.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  # The tests of how a refusal reaches the server (an error answer to its
  # sampling/createMessage, which its tool turns into an isError result) and
  # of the initialize request pin protocol_mode "legacy": the default, "auto",
  # speaks 2026-07-28 to the dual-era fixture, where sampling is an input
  # request and a refusal fails the call in the client instead.

  @answer %{"role" => "assistant", "content" => %{"type" => "text", "text" => "pong"}, "model" => "test-model"}

  defp sample(c, prompt, max_tokens) do
    Client.call_tool(c, "sample", %{prompt: prompt, max_tokens: max_tokens}, 10_000)
  end

  defp answer_of({:ok, [%{"text" => json}]}) do
    {:ok, answer} = LemonMCP.NIF.decode_json(json)
    answer
  end

  test "a handler gets the raw params in its own process; its reply reaches the server" do
    me = self()
    log = Fixture.tmp_path("stdin")

    c =
      Fixture.start!(
        protocol_mode: "legacy",
        args: ["-log-file", log],
        sampling_handler: fn params ->
          send(me, {:handler, self(), params})
          {:ok, @answer}
        end
      )

    assert %{"model" => "test-model", "content" => %{"text" => "pong"}, "role" => "assistant"} =
             answer_of(sample(c, "ping", 16))

    assert_received {:handler, pid, params}
    assert pid != c

    assert %{"maxTokens" => 16, "messages" => [%{"role" => "user", "content" => %{"type" => "text", "text" => "ping"}}]} =
             params

    # The server saw the sampling capability in initialize.
    [init | _] = File.read!(log) |> String.split("\n", trim: true)
    {:ok, %{"params" => %{"capabilities" => caps}}} = LemonMCP.NIF.decode_json(init)
    assert Map.has_key?(caps, "sampling")
    File.rm(log)
  end

  test "a slow handler blocks nothing else" do
    me = self()

    # The handler answers only once the echo below has: were it to block the
    # client, the echo could not answer before the handler's own 60 s wait
    # ran out, long past the echo's timeout.
    c =
      Fixture.start!(
        sampling_handler: fn _ ->
          send(me, {:handler_waiting, self()})

          receive do
            :go -> {:ok, @answer}
          after
            60_000 -> {:error, :not_released}
          end
        end
      )

    task = Task.async(fn -> sample(c, "slow", 8) end)
    assert_receive {:handler_waiting, handler}, 10_000
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "meanwhile"}, 10_000)
    assert Client.state(c) == :ready
    send(handler, :go)
    assert %{"model" => "test-model"} = answer_of(Task.await(task))
  end

  test "a handler's {:error, reason} and a crash become errors for the server" do
    c =
      Fixture.start!(
        protocol_mode: "legacy",
        sampling_handler: fn %{"messages" => [%{"content" => %{"text" => t}}]} ->
          case t do
            "refuse" -> {:error, :not_today}
            "crash" -> raise "boom"
            "junk" -> :what
          end
        end
      )

    assert {:error, {:tool_error, [%{"text" => text}]}} = sample(c, "refuse", 8)
    assert text =~ "rejected"
    assert {:error, {:tool_error, [%{"text" => text}]}} = sample(c, "crash", 8)
    assert text =~ "boom" or text =~ "failed"
    assert {:error, {:tool_error, [%{"text" => _}]}} = sample(c, "junk", 8)
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "alive"})
  end

  test "without a handler or policy, sampling is not advertised and the server's request is refused" do
    c = Fixture.start!(protocol_mode: "legacy")
    assert {:error, {:tool_error, [%{"text" => text}]}} = sample(c, "ping", 8)
    assert text != ""
  end

  test "reviewed_model: the reviewer sees a redacted summary first, the delegate the raw params and the same summary" do
    me = self()

    c =
      Fixture.start!(
        sampling_policy: [
          mode: :reviewed_model,
          max_tokens: 64,
          reviewer: fn summary ->
            send(me, {:reviewer, self(), summary})
            :approve
          end,
          delegate: fn params, summary ->
            send(me, {:delegate, self(), params, summary})
            {:ok, @answer}
          end
        ]
      )

    assert %{"model" => "test-model"} = answer_of(sample(c, "ping", 16))
    assert_received {:reviewer, rpid, summary}
    assert_received {:delegate, dpid, params, dsummary}
    assert rpid != c and dpid != c

    assert %{message_count: 1, max_tokens: 16, text_char_count: 4, request_hash: hash, roles: ["user"]} = summary
    assert is_binary(hash) and byte_size(hash) >= 16
    assert summary.requested_model == nil
    refute inspect(summary) =~ "ping"

    assert [%{"content" => %{"text" => "ping"}}] = params["messages"]
    assert dsummary == summary
  end

  test "model mode: the delegate of arity 1 gets the raw params" do
    c = Fixture.start!(sampling_policy: [mode: :model, delegate: fn %{"messages" => [_]} -> {:ok, @answer} end])
    assert %{"model" => "test-model"} = answer_of(sample(c, "hi", 8))
  end

  defp denied(c, prompt, max_tokens) do
    :ok = Client.subscribe(c)
    assert {:error, {:tool_error, [%{"text" => text}]}} = sample(c, prompt, max_tokens)
    assert_receive {:lemon_mcp, ^c, :sampling_denied, %{"denial" => denial}}, 5_000
    {text, denial}
  end

  test "max_tokens over the limit: max_tokens_exceeded with a safe summary; no reviewer, no delegate" do
    me = self()

    c =
      Fixture.start!(
        protocol_mode: "legacy",
        sampling_policy: [
          mode: :reviewed_model,
          max_tokens: 100,
          reviewer: fn _ -> send(me, :reviewer_called) && :approve end,
          delegate: fn _ -> send(me, :delegate_called) && {:ok, @answer} end
        ]
      )

    {text, denial} = denied(c, "secret prompt", 101)
    assert %{"reason" => "max_tokens_exceeded", "request" => %{"max_tokens" => 101, "message_count" => 1}} = denial
    refute inspect(denial) =~ "secret"
    refute text =~ "secret prompt"
    refute_received :reviewer_called
    refute_received :delegate_called
  end

  test "a reviewer rejecting with text: review_rejected with a detail hash, no text leaked, no delegate" do
    me = self()

    c =
      Fixture.start!(
        protocol_mode: "legacy",
        sampling_policy: [
          mode: :reviewed_model,
          reviewer: fn _ -> {:reject, "too spicy for this server"} end,
          delegate: fn _ -> send(me, :delegate_called) && {:ok, @answer} end
        ]
      )

    {text, denial} = denied(c, "hello", 8)
    assert %{"reason" => "review_rejected", "detail_hash" => hash} = denial
    assert is_binary(hash)
    refute inspect(denial) =~ "spicy"
    refute text =~ "spicy"
    refute_received :delegate_called
  end

  test "deny mode refuses every request (sampling_disabled)" do
    c = Fixture.start!(protocol_mode: "legacy", sampling_policy: [mode: :deny])
    {_text, denial} = denied(c, "hello", 8)
    assert denial["reason"] == "sampling_disabled"
  end

  test "a reviewer's {:error, _} is review_failed" do
    c =
      Fixture.start!(
        protocol_mode: "legacy",
        sampling_policy: [
          mode: :reviewed_model,
          reviewer: fn _ -> {:error, :ops_down} end,
          delegate: fn _ -> {:ok, @answer} end
        ]
      )

    {_text, denial} = denied(c, "hello", 8)
    assert denial["reason"] == "review_failed"
  end

  test "an allowlist miss is model_not_allowed (seed 22); a listed model reaches the delegate" do
    me = self()

    c =
      Fixture.start!(
        protocol_mode: "legacy",
        sampling_policy: [
          mode: :model,
          allowed_models: ["good-model"],
          delegate: fn _ -> send(me, :delegate_called) && {:ok, @answer} end
        ]
      )

    :ok = Client.subscribe(c)

    assert {:error, {:tool_error, [%{"text" => _}]}} =
             Client.call_tool(c, "sample", %{prompt: "hi", max_tokens: 8, model: "other-model"}, 10_000)

    assert_receive {:lemon_mcp, ^c, :sampling_denied, %{"denial" => denial}}, 5_000
    assert %{"reason" => "model_not_allowed", "request" => %{"requested_models" => ["other-model"]}} = denial
    refute_received :delegate_called

    assert {:ok, [%{"text" => json}]} =
             Client.call_tool(c, "sample", %{prompt: "hi", max_tokens: 8, model: "good-model"}, 10_000)

    assert {:ok, %{"model" => "test-model"}} = LemonMCP.NIF.decode_json(json)
    assert_received :delegate_called
  end

  test "a sampling handler wins over a policy" do
    c = Fixture.start!(sampling_handler: fn _ -> {:ok, @answer} end, sampling_policy: [mode: :deny])
    assert %{"model" => "test-model"} = answer_of(sample(c, "x", 8))
  end
end
