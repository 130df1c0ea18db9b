defmodule LemonMCP.Client.Server do
  @moduledoc false
  # The client process: a thin owner of one NIF client resource. It never
  # waits on the library: a request goes out with NIF.call/4 (which returns
  # at once) and the caller is answered with GenServer.reply/2 when the
  # {:lmcp_done, ...} message arrives from a library thread. App requests
  # (sampling, review, roots, elicitation) run in their own processes and
  # answer the library directly. close/2 runs the blocking lmcp_client_close
  # in a separate process (on a dirty I/O scheduler).

  use GenServer

  alias LemonMCP.{Error, NIF, Sampling}
  alias LemonMCP.Client.OAuth

  @states %{0 => :disconnected, 1 => :initializing, 2 => :ready, 3 => :closing, 4 => :disconnected, 5 => :failed}
  @default_kinds [:ready, :failed, :closed, :notification, :progress, :sampling_denied]

  defstruct [
    :res,
    :tag,
    :failure,
    timeout_ms: 30_000,
    pending: %{},
    waiters: %{},
    subscribers: %{},
    callbacks: %{},
    # Telemetry records (only when registered at start: records? true), by
    # call id: the record, or {:waiting, from} for a caller that asked first.
    records?: false,
    # The library's telemetry handler is registered (at start, or later for
    # the session's record: LemonMCP.Telemetry.register_late/2).
    telemetry?: false,
    records: %{}
  ]

  # ------------------------------------------------------------- start

  def start_link(config, callbacks, opts) do
    gen_opts = if name = opts[:name], do: [name: name], else: []

    # The client is created and connected here, in the caller, so that a
    # bad configuration or an unknown executable is an {:error, reason}
    # with no process exit to trap (the client process only adopts it).
    with {:ok, res} <- new(config),
         {:ok, pid} <- GenServer.start_link(__MODULE__, {res, callbacks, opts}, gen_opts) do
      case NIF.connect(res) do
        :ok ->
          {:ok, pid}

        {:error, status, info} ->
          # Unlinked first: a caller that traps exits gets no stray EXIT.
          Process.unlink(pid)
          GenServer.stop(pid, :normal)
          {:error, connect_reason(status, info, config)}
      end
    end
  end

  defp new(config) do
    case NIF.client_new(config) do
      {:ok, res} -> {:ok, res}
      {:error, status, info} -> {:error, config_reason(status, info)}
      {:error, reason} -> {:error, reason}
    end
  end

  defp config_reason(-1, info), do: {:invalid_option, Error.message(info)}
  defp config_reason(status, info), do: Error.reason(status, info)

  # The seed's {:invalid_command, "Executable not found: cmd"}: the library
  # names why a server could not be started in its error data's "cause"
  # (include/lemonmcp.h); a missing executable is a transport failure (-8),
  # the other unusable commands invalid arguments (-1).
  defp connect_reason(status, info, config) when status in [-1, -8] do
    case info do
      %{"data" => %{"cause" => "executable_not_found"}} ->
        {:invalid_command, "Executable not found: " <> get_in(config, ["transport", "command"])}

      _ when status == -1 ->
        {:invalid_command, Error.message(info)}

      _ ->
        {:spawn_failed, Error.message(info)}
    end
  end

  defp connect_reason(status, info, _config), do: Error.reason(status, info)

  @impl true
  def init({res, callbacks, opts}) do
    tag = make_ref()

    # Records only when events go somewhere: with a handler the core
    # measures every call.
    records? = LemonMCP.Telemetry.records?()

    with :ok <- NIF.adopt(res),
         :ok <- NIF.set_handlers(res, tag),
         :ok <- if(records?, do: NIF.set_telemetry(res, tag), else: :ok) do
      st = %__MODULE__{
        res: res,
        tag: tag,
        records?: records?,
        telemetry?: records?,
        callbacks: callbacks,
        timeout_ms: Keyword.get(opts, :timeout_ms, 30_000)
      }

      st =
        case opts[:subscriber] do
          nil -> st
          pid when is_pid(pid) -> add_subscriber(st, pid, @default_kinds)
          {pid, kinds} when is_pid(pid) -> add_subscriber(st, pid, kinds)
        end

      {:ok, st}
    else
      {:error, status, info} -> {:stop, Error.reason(status, info)}
    end
  end

  @impl true
  def terminate(_reason, st) do
    st = register_late(st)
    # The free ends a ready session; its record is delivered before the
    # free returns, to this process, whose loop no longer runs.
    NIF.free(st.res)
    LemonMCP.Telemetry.drain_session_records(self(), st.tag)
  end

  defp register_late(st) do
    %{st | telemetry?: LemonMCP.Telemetry.register_late(st.telemetry?, fn -> NIF.set_telemetry(st.res, st.tag) end)}
  end

  # ------------------------------------------------------------- calls

  # pending: call id => {from, :recorded | :plain}.
  defp start_call(method, params, opts, waiter, st) do
    case NIF.call(st.res, method, params, call_options(opts, st)) do
      {:ok, id} ->
        {:noreply, %{st | pending: Map.put(st.pending, id, waiter)}}

      {:error, status, info} ->
        {_from, kind} = waiter

        {:reply,
         LemonMCP.Completion.reply_for(kind, {:error, Error.reason(status, info, state_of(st))}, nil, status, info), st}

      {:error, reason} ->
        {:reply, {:error, reason}, st}
    end
  end

  @impl true
  def handle_call({:call, method, params, opts}, from, st), do: start_call(method, params, opts, {from, :plain}, st)

  # A call inside LemonMCP.Telemetry.span/5: its reply carries its record.
  def handle_call({:call, method, params, opts, :recorded}, from, st),
    do: start_call(method, params, opts, {from, :recorded}, st)

  # A direct call's record (direct_call/7): a call's record is sent before
  # its completion, but to this process, so it may still be on its way.
  def handle_call({:take_record, _id}, _from, %{records?: false} = st), do: {:reply, nil, st}

  def handle_call({:take_record, id}, from, st) do
    case Map.pop(st.records, id) do
      {nil, _} -> {:noreply, put_in(st.records[id], {:waiting, from})}
      {record, records} -> {:reply, record, %{st | records: records}}
    end
  end

  def handle_call(:state, _from, st), do: {:reply, state_of(st), st}

  def handle_call(:server_info, _from, st) do
    case NIF.server_info(st.res) do
      {:ok, info} -> {:reply, {:ok, info}, st}
      {:error, _status, _info} -> {:reply, {:error, :not_connected}, st}
    end
  end

  def handle_call({:await_ready, timeout}, from, st) do
    case state_of(st) do
      :ready ->
        {:reply, :ok, st}

      :initializing ->
        {:noreply, add_waiter(st, from, timeout)}

      :failed when st.failure != nil ->
        {:reply, {:error, st.failure}, st}

      :failed ->
        # The library enters :failed before it sends the "failed" event that
        # carries the reason (say {:auth_required, metadata}): the event is
        # on its way, and on_event(:failed) answers the waiter with it.
        {:noreply, add_waiter(st, from, timeout)}

      _closed ->
        {:reply, {:error, :connection_closed}, st}
    end
  end

  def handle_call({:notify, method, params}, _from, st) do
    reply =
      case NIF.notify(st.res, method, params) do
        :ok -> :ok
        {:error, status, info} -> {:error, Error.reason(status, info, state_of(st))}
        {:error, reason} -> {:error, reason}
      end

    {:reply, reply, st}
  end

  def handle_call({:close, timeout}, from, st) do
    st = register_late(st)
    res = st.res
    # lmcp_client_close blocks (on a dirty I/O scheduler); not in this loop.
    spawn(fn ->
      _ = NIF.close(res, timeout)
      GenServer.reply(from, :ok)
    end)

    {:noreply, st}
  end

  def handle_call({:subscribe, pid, kinds}, _from, st), do: {:reply, :ok, add_subscriber(st, pid, kinds)}

  def handle_call({:unsubscribe, pid}, _from, st) do
    case Map.pop(st.subscribers, pid) do
      {nil, _} ->
        {:reply, :ok, st}

      {{mref, _}, subs} ->
        Process.demonitor(mref, [:flush])
        {:reply, :ok, %{st | subscribers: subs}}
    end
  end

  def handle_call(:resource, _from, st), do: {:reply, st.res, st}

  # What a caller needs to call the library directly (direct_call/7).
  def handle_call(:direct_info, _from, st), do: {:reply, {st.res, st.timeout_ms}, st}

  @doc false
  # A request made by the calling process itself (LemonMCP.Client.request/4):
  # NIF.call sends the completion to its caller, so the caller receives it
  # here, with no hop through the client process. Returns the reply, or
  # :stale when the resource was freed (the client process is gone). With
  # an owner (the client process, when events go out) the reply carries
  # the call's telemetry record, which the owner received.
  def direct_call(res, timeout_ms, method, params, opts, outer, owner) do
    case NIF.call(res, method, params, call_options(opts, timeout_ms)) do
      {:ok, id} ->
        receive do
          {:lmcp_done, ^id, status, payload} ->
            with_record(done_reply(status, payload, res), owner, id, {status, payload})
        after
          outer ->
            # A safety net: the library's own deadline is shorter. The
            # completion still comes once; it must not stay in the mailbox.
            NIF.cancel(res, id)

            receive do
              {:lmcp_done, ^id, _, _} -> :ok
            after
              1_000 -> :ok
            end

            {:error, :timeout}
        end

      {:error, -2, _info} ->
        :stale

      {:error, status, info} ->
        reply = {:error, Error.reason(status, info, res_state(res))}
        if owner, do: LemonMCP.Completion.reply_for(:recorded, reply, nil, status, info), else: reply

      {:error, reason} ->
        {:error, reason}
    end
  end

  defp with_record(reply, nil, _id, _done), do: reply

  defp with_record(reply, owner, id, {status, payload}) do
    record =
      try do
        # The owner answers at once, or when the record (sent before the
        # completion) reaches it; the bound only guards a lost owner.
        GenServer.call(owner, {:take_record, id}, 5_000)
      catch
        :exit, _ -> nil
      end

    LemonMCP.Completion.reply_for(:recorded, reply, record, status, payload)
  end

  # ---------------------------------------------------------- messages

  @impl true
  def handle_info({:lmcp_done, id, status, payload}, st) do
    case LemonMCP.Completion.done(st.pending, st.records, id, status, payload, state_of(st)) do
      :unknown -> {:noreply, st}
      {_kind, _reply, pending, records} -> {:noreply, %{st | pending: pending, records: records}}
    end
  end

  def handle_info({:lmcp_telemetry, tag, :session, record}, %{tag: tag} = st) do
    LemonMCP.Telemetry.session_record(self(), record)
    {:noreply, st}
  end

  # A call of a client that registered only for its sessions: no caller asks.
  def handle_info({:lmcp_telemetry, tag, :call, _record}, %{tag: tag, records?: false} = st), do: {:noreply, st}

  # A call's record: kept for its caller (a pending call's reply, or a
  # direct call's take_record); kept by id either way, since a direct
  # call's caller asks only once its completion came.
  def handle_info({:lmcp_telemetry, tag, :call, %{"call_id" => id} = record}, %{tag: tag} = st) do
    case Map.pop(st.records, id) do
      {{:waiting, from}, records} ->
        GenServer.reply(from, record)
        {:noreply, %{st | records: records}}

      {nil, records} ->
        {:noreply, %{st | records: Map.put(keep_room(records), id, record)}}
    end
  end

  def handle_info({:lmcp_event, tag, kind, payload}, %{tag: tag} = st) do
    if kind in [:restarting, :failed], do: LemonMCP.Telemetry.server_event(self(), kind, payload)
    st = if kind == :ready, do: register_late(st), else: st
    st = on_event(kind, payload, st)
    publish(st, kind, event_payload(kind, payload))
    {:noreply, st}
  end

  def handle_info({:lmcp_app_request, tag, id, kind, payload}, %{tag: tag} = st) do
    serve_app_request(st, id, kind, payload)
    {:noreply, st}
  end

  def handle_info({:await_timeout, ref}, st) do
    case Map.pop(st.waiters, ref) do
      {nil, _} ->
        {:noreply, st}

      {{from, _}, waiters} ->
        GenServer.reply(from, {:error, :timeout})
        {:noreply, %{st | waiters: waiters}}
    end
  end

  def handle_info({:DOWN, _mref, :process, pid, _}, st) do
    {:noreply, %{st | subscribers: Map.delete(st.subscribers, pid)}}
  end

  def handle_info(_other, st), do: {:noreply, st}

  # ------------------------------------------------------------ helpers

  # Records no caller took (a call made while no events went out) are
  # dropped past @max_records; waiting callers are kept.
  @max_records 1024
  defp keep_room(records) when map_size(records) < @max_records, do: records
  defp keep_room(records), do: Map.filter(records, fn {_id, r} -> match?({:waiting, _}, r) end)

  defp state_of(st), do: res_state(st.res)

  defp add_waiter(st, from, timeout) do
    ref = make_ref()
    timer = if timeout == :infinity, do: nil, else: Process.send_after(self(), {:await_timeout, ref}, timeout)
    %{st | waiters: Map.put(st.waiters, ref, {from, timer})}
  end

  defp res_state(res) do
    case NIF.state(res) do
      n when is_integer(n) -> Map.get(@states, n, :disconnected)
      _ -> :disconnected
    end
  end

  defp call_options(opts, %__MODULE__{timeout_ms: timeout_ms}), do: call_options(opts, timeout_ms)

  defp call_options(opts, timeout_ms) do
    timeout = effective_timeout(Keyword.get(opts, :timeout, timeout_ms), timeout_ms)

    LemonMCP.CallOptions.to_json(opts, %{"timeout_ms" => timeout})
  end

  # The library's deadline is the shorter of the caller's and the client's,
  # so the caller gets {:error, :timeout} rather than an exit.
  defp effective_timeout(:infinity, :infinity), do: 0
  defp effective_timeout(:infinity, client), do: client
  defp effective_timeout(caller, :infinity), do: caller
  defp effective_timeout(caller, client), do: min(caller, client)

  defp done_reply(status, payload, res), do: Error.done_reply(status, payload, res_state(res))

  defp on_event(:ready, _payload, st) do
    Enum.each(st.waiters, fn {_, {from, timer}} ->
      if timer, do: Process.cancel_timer(timer)
      GenServer.reply(from, :ok)
    end)

    %{st | waiters: %{}}
  end

  defp on_event(kind, payload, st) when kind in [:failed, :closed] do
    reason =
      case {kind, payload} do
        {:failed, %{"status" => status} = info} -> Error.reason(status, info)
        {:failed, _} -> :handshake_failed
        {:closed, _} -> :connection_closed
      end

    Enum.each(st.waiters, fn {_, {from, timer}} ->
      if timer, do: Process.cancel_timer(timer)
      GenServer.reply(from, {:error, reason})
    end)

    %{st | waiters: %{}, failure: if(kind == :failed, do: reason, else: st.failure)}
  end

  defp on_event(_kind, _payload, st), do: st

  defp event_payload(:failed, %{"status" => status} = info), do: Map.put(info, "reason", Error.reason(status, info))
  defp event_payload(_kind, payload), do: payload

  defp add_subscriber(st, pid, kinds) do
    kinds = if kinds == :all, do: :all, else: List.wrap(kinds)

    case Map.get(st.subscribers, pid) do
      {mref, _} ->
        %{st | subscribers: Map.put(st.subscribers, pid, {mref, kinds})}

      nil ->
        mref = Process.monitor(pid)
        %{st | subscribers: Map.put(st.subscribers, pid, {mref, kinds})}
    end
  end

  defp publish(st, kind, payload) do
    Enum.each(st.subscribers, fn {pid, {_mref, kinds}} ->
      if kinds == :all or kind in kinds, do: send(pid, {:lemon_mcp, self(), kind, payload})
    end)
  end

  # Each app request is answered from its own process: a sampling handler
  # or a reviewer may take minutes, and this loop goes on meanwhile.
  defp serve_app_request(st, id, kind, payload) do
    res = st.res
    answer = host_answer(kind, payload, st.callbacks)

    {:ok, _} =
      Task.start_link(fn ->
        {status, body} =
          try do
            answer.()
          rescue
            e ->
              {Error.code(:internal), %{"code" => -32603, "message" => "host handler failed: " <> Exception.message(e)}}
          catch
            kind, reason ->
              {Error.code(:internal),
               %{"code" => -32603, "message" => "host handler failed: #{inspect({kind, reason})}"}}
          end

        NIF.respond(res, id, status, body)
      end)

    :ok
  end

  defp host_answer(:sampling, payload, cbs) do
    params = payload["params"] || %{}

    cond do
      f = cbs[:sampling_handler] ->
        fn -> Sampling.handler_answer(f.(params)) end

      f = cbs[:delegate] ->
        summary = Sampling.summary(payload["summary"])

        fn ->
          result = if is_function(f, 2), do: f.(params, summary), else: f.(params)
          delegate_answer(result)
        end

      true ->
        fn -> {Error.code(:policy_denied), %{"code" => -1, "message" => "Sampling is not enabled"}} end
    end
  end

  defp host_answer(:review, payload, cbs) do
    case cbs[:reviewer] do
      nil -> fn -> Sampling.review_answer({:error, :reviewer_required}) end
      f -> fn -> Sampling.review_answer(f.(Sampling.summary(payload["summary"]))) end
    end
  end

  defp host_answer(:roots, _payload, cbs) do
    roots = cbs[:roots] || []
    fn -> {0, %{"roots" => if(is_function(roots), do: roots.(), else: roots)}} end
  end

  defp host_answer(:elicitation, payload, cbs) do
    case cbs[:elicitation_handler] do
      nil ->
        fn -> {Error.code(:unsupported), %{"code" => -32601, "message" => "elicitation is not handled"}} end

      f ->
        fn ->
          case f.(payload["params"] || %{}) do
            {:ok, result} when is_map(result) ->
              {0, result}

            {:error, r} ->
              {Error.code(:policy_denied), %{"code" => -1, "message" => "Elicitation rejected", "data" => inspect(r)}}

            other ->
              {Error.code(:internal),
               %{"code" => -32603, "message" => "Invalid elicitation handler response", "data" => inspect(other)}}
          end
        end
    end
  end

  # OAuth: the library's own questions. The provider's failures fail the
  # authorization (an error status: the start or call gets
  # {:auth_required, metadata}); the single-process token cache's are
  # swallowed, as in the seed (a failed load is "nothing stored", a failed
  # save is ignored).
  defp host_answer(:authorize, payload, cbs) do
    case cbs[:authorization_code_provider] do
      nil ->
        fn -> {Error.code(:unsupported), %{"message" => "no authorization_code_provider"}} end

      f ->
        fn ->
          result =
            try do
              if is_function(f, 1), do: f.(OAuth.authorization_request(payload)), else: f.()
            rescue
              _ -> {:error, :provider_failed}
            catch
              _, _ -> {:error, :provider_failed}
            end

          OAuth.authorize_answer(result)
        end
    end
  end

  # The application's store (auth.token_store {"type": "app"}): its
  # failures fail the request, as any store's do.
  defp host_answer(kind, payload, %{store: store}) when kind in [:store_load, :store_save] do
    fn -> LemonMCP.Store.answer(kind, payload, store) end
  end

  defp host_answer(kind, _payload, _cbs) do
    fn -> {Error.code(:unsupported), %{"code" => -32601, "message" => "#{kind} is not handled by this client"}} end
  end

  defp delegate_answer({:ok, result}) when is_map(result), do: {0, result}

  # The reason stays here: the server learns only that the delegate failed.
  defp delegate_answer({:error, _reason}) do
    {Error.code(:policy_denied),
     %{"code" => -1, "message" => "Sampling request rejected", "data" => %{"reason" => "delegate_failed"}}}
  end

  defp delegate_answer(_other) do
    {Error.code(:internal),
     %{
       "code" => -32603,
       "message" => "Invalid sampling delegate response",
       "data" => %{"reason" => "invalid_delegate_result"}
     }}
  end
end
