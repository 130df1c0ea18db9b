defmodule LemonMCP.TasksTest do
  # 2025-11-25 tasks through the Elixir API: a task-augmented tool call is
  # one call that completes (with progress events), against the fixture
  # server (the Go SDK with -legacy-tasks) and the TypeScript SDK v1 server
  # (tests/fixtures/tsv1tasks, prepared by `make tsv1-fixture`); and the
  # client as receiver of task-augmented elicitation and sampling.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  defp tsv1_script do
    dir = System.get_env("LEMONMCP_TSV1_DIR") || Path.expand("../../../build/tsv1tasks", __DIR__)
    script = Path.join(dir, "server.mjs")

    unless File.exists?(Path.join(dir, "node_modules/@modelcontextprotocol/sdk/package.json")) do
      raise "the TypeScript SDK v1 tasks server is not prepared in #{dir} (run `make tsv1-fixture`)"
    end

    script
  end

  defp peer("go fixture"),
    do: %{
      command: Fixture.path(),
      args: ["-legacy-tasks"],
      slow: {"task_echo", %{"text" => "lemon"}, "lemon"},
      ask: "task_ask",
      forever: "task_forever",
      maybe: {"task_maybe", "lemon"}
    }

  defp peer("typescript sdk v1"),
    do: %{
      command: "node",
      args: [tsv1_script()],
      slow: {"delay", %{"ms" => 300}, "done after 300 ms"},
      ask: "ask",
      forever: "forever",
      maybe: {"maybe", "maybe lemon"}
    }

  defp cancelled(c) do
    {:ok, %{"tasks" => tasks}} = Client.request(c, "tasks/list", nil, all_pages: true)
    Enum.count(tasks, &(&1["status"] == "cancelled"))
  end

  for name <- ["go fixture", "typescript sdk v1"] do
    test "a task-augmented call is one call, against the #{name}" do
      p = peer(unquote(name))

      {:ok, c} =
        Client.start_link(
          command: p.command,
          args: p.args,
          elicitation_handler: fn _params -> {:ok, %{"action" => "accept", "content" => %{"name" => "Ada"}}} end
        )

      :ok = Client.await_ready(c, 20_000)
      assert {:ok, %{"protocolVersion" => "2025-11-25"}} = Client.initialize_result(c)
      :ok = Client.subscribe(c, self(), [:progress])

      {slow, args, text} = p.slow
      assert {:ok, [%{"text" => ^text}]} = Client.call_tool(c, slow, args, timeout: 15_000, progress: true)
      assert_receive {:lemon_mcp, ^c, :progress, %{"task_id" => _}}, 5_000

      assert {:ok, [%{"text" => "hello Ada"}]} = Client.call_tool(c, p.ask, %{}, 15_000)

      {maybe, maybe_text} = p.maybe
      assert {:ok, [%{"text" => ^maybe_text}]} = Client.call_tool(c, maybe, %{"text" => "lemon"}, 15_000)

      assert {:ok, [%{"text" => ^maybe_text}]} =
               Client.call_tool(c, maybe, %{"text" => "lemon"}, timeout: 15_000, task: true)

      # A timeout cancels the task on the server.
      assert {:error, :timeout} = Client.call_tool(c, p.forever, %{}, timeout: 500)
      assert Fixture.eventually(fn -> cancelled(c) >= 1 end, 10_000)
      Client.close(c)
    end
  end

  test "the client serves task-augmented elicitation and sampling, against the typescript sdk v1" do
    # With protocol_tasks the client is a receiver: each request carrying
    # params.task is answered with a task, its question (naming the task)
    # reaches the handler, and the server's tasks/result gets the answer.
    test = self()

    {:ok, c} =
      Client.start_link(
        command: "node",
        args: [tsv1_script()],
        protocol_tasks: true,
        elicitation_handler: fn params ->
          send(test, {:asked, :elicitation, params})
          {:ok, %{"action" => "accept", "content" => %{"name" => "Ada"}}}
        end,
        sampling_handler: fn params ->
          send(test, {:asked, :sampling, params})
          {:ok, %{"role" => "assistant", "content" => %{"type" => "text", "text" => "hi"}, "model" => "stand-in"}}
        end
      )

    :ok = Client.await_ready(c, 20_000)
    assert {:ok, [%{"text" => "hello Ada (task created)"}]} = Client.call_tool(c, "ask_as_task", %{}, 15_000)
    assert_received {:asked, :elicitation, %{"task" => %{"ttl" => 60_000}}}
    assert {:ok, [%{"text" => "the model says hi (task created)"}]} = Client.call_tool(c, "sample_as_task", %{}, 15_000)
    assert_received {:asked, :sampling, %{"task" => %{"ttl" => 60_000}}}
    Client.close(c)
  end
end
