<?php
// One operation of one client as bench's round trips run it: untimed
// set-up (a queue to send to, a message to receive), the timed call, then,
// untimed, the check against the catalogue and the clean-up (a sent
// message is received back and compared; a registered queue is deleted).
// Also the steady and cold measurements and the JSON rows they make.

declare(strict_types=1);

require_once __DIR__ . '/clients.php';

const WSB_MESSAGE = 'message-a/100';

/** [operation, payload label or null] in the contract's order: E1, E3, E5. */
function wsb_operations(array $sizes): array
{
    $operations = [['ping', null]];
    foreach (['ints', 'strings', 'objects'] as $kind) {
        foreach ($sizes as $n) {
            $operations[] = ['get', "$kind/$n"];
        }
    }
    return array_merge($operations, [['register', null], ['send', WSB_MESSAGE],
        ['receive', WSB_MESSAGE], ['unregister', null]]);
}

function wsb_case_name(string $stack, string $client, string $operation, ?string $label,
    string $phase): string
{
    return implode('/', array_merge(['rtt', $stack, $client, $operation],
        $label === null ? [] : [$label], [$phase]));
}

final class WsbRunner
{
    public ?string $queue = null;
    private mixed $argument = null;
    private mixed $want = null;
    private mixed $reply = null;
    /** @var class-string<WsbClient> */
    private string $class;

    public function __construct(public WsbClient $client, private string $operation,
        ?string $label, array $payloads)
    {
        $this->class = $client::class;
        $class = $this->class;
        if ($operation === 'get') {
            $this->argument = $class::getArgument($label);
            $this->want = $class::expectedPayload($payloads[$label]);
        } elseif ($operation === 'send' || $operation === 'receive') {
            $this->argument = $class::messageArgument($payloads[$label]);
            $this->want = [$class::expectedMessage($payloads[$label]['message'])];
        }
    }

    public function argument(): mixed
    {
        return $this->argument;
    }

    public function setUp(): void
    {
        if (in_array($this->operation, ['send', 'receive', 'unregister'], true)
            && $this->queue === null) {
            $this->queue = self::checkedQueue($this->client->register(), 'register');
        }
        if ($this->operation === 'receive' && !$this->client->send($this->queue, $this->argument)) {
            throw new RuntimeException('verification failed: send before receive: not acknowledged');
        }
    }

    /** The timed call. */
    public function call(): void
    {
        $client = $this->client;
        $this->reply = match ($this->operation) {
            'ping' => $client->ping(),
            'get' => $client->get($this->argument),
            'register' => $client->register(),
            'send' => $client->send($this->queue, $this->argument),
            'receive' => $client->receive($this->queue),
            'unregister' => $client->unregister($this->queue),
        };
        if ($this->operation === 'unregister') {
            $this->queue = null;
        }
    }

    /** Checks a reply, however it was obtained, and cleans up after it. */
    public function checkAndCleanUp(mixed $reply, string $what): void
    {
        $class = $this->class;
        switch ($this->operation) {
            case 'ping':
                wsb_check($class::pingText($reply), 'pong', $what, $class::TOLERANCE);
                break;
            case 'get':
                wsb_check($class::payload($reply), $this->want, $what, $class::TOLERANCE);
                break;
            case 'receive':
                wsb_check($class::messages($reply), $this->want, $what, $class::TOLERANCE);
                break;
            case 'register':
                $queue = self::checkedQueue($reply, $what);
                if (!$this->client->unregister($queue)) {
                    throw new RuntimeException("verification failed: $what: unregister after it");
                }
                break;
            default:  // send, unregister
                if ($reply !== true) {
                    throw new RuntimeException(
                        "verification failed: $what: {$this->operation} not acknowledged");
                }
                if ($this->operation === 'send') {
                    wsb_check($class::messages($this->client->receive($this->queue)), $this->want,
                        "$what, received back", $class::TOLERANCE);
                }
        }
    }

    public function checkLast(string $what): void
    {
        $this->checkAndCleanUp($this->reply, $what);
    }

    public function reply(): mixed
    {
        return $this->reply;
    }

    /** Deletes the queue this runner set up, if any is left. */
    public function close(): void
    {
        if ($this->queue !== null) {
            $queue = $this->queue;
            $this->queue = null;
            $this->client->unregister($queue);
        }
    }

    private static function checkedQueue(mixed $queue, string $what): string
    {
        if (!is_string($queue) || $queue === '') {
            throw new RuntimeException("verification failed: $what: no queue id, got "
                . wsb_show($queue));
        }
        return $queue;
    }
}

/** Per-call times (ns) of one client after a verified warm-up call. */
function wsb_steady(string $class, string $address, string $operation, ?string $label,
    array $payloads, int $calls, float $max_seconds): array
{
    $runner = new WsbRunner(new $class($address), $operation, $label, $payloads);
    try {
        $runner->setUp();
        $runner->call();
        $runner->checkLast('first reply');
        $times = [];
        $deadline = hrtime(true) + (int) ($max_seconds * 1e9);
        while (count($times) < $calls && hrtime(true) < $deadline) {
            $runner->setUp();
            $start = hrtime(true);
            $runner->call();
            $times[] = hrtime(true) - $start;
            $runner->checkLast('reply ' . count($times));
        }
        return $times;
    } finally {
        $runner->close();
    }
}

/**
 * The first call of a fresh PHP process (cold.php), as that child reports
 * it (ns). This process's own client sets up the queue before and checks
 * and cleans up after, so the child makes only the one call.
 */
function wsb_cold(string $payload_json, string $name, string $address, string $operation,
    ?string $label, array $payloads): int
{
    $class = WSB_CLIENTS[$name][0];
    $helper = new WsbRunner(new $class($address), $operation, $label, $payloads);
    try {
        $helper->setUp();
        [$status, $out, $err] = wsb_run([PHP_BINARY, __DIR__ . '/cold.php', $name, $address,
            $operation, $label ?? '', $helper->queue ?? '', $payload_json], 120);
        if ($status !== 0) {
            $lines = explode("\n", trim($err));
            throw new RuntimeException(trim(end($lines)) ?: "the cold call exited with $status");
        }
        $fields = explode(' ', trim($out));
        if ($operation === 'register') {
            $helper->client->unregister($fields[1] ?? '');
        } elseif ($operation === 'send') {
            wsb_check($class::messages($helper->client->receive($helper->queue)),
                [$class::expectedMessage($payloads[$label]['message'])],
                'cold send, received back', $class::TOLERANCE);
        } elseif ($operation === 'unregister') {
            $helper->queue = null;
        }
        return (int) $fields[0];
    } finally {
        $helper->close();
    }
}

/** Runs a command to its end or for at most $seconds: [status, stdout, stderr]. */
function wsb_run(array $command, int $seconds): array
{
    $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    if ($process === false) {
        throw new RuntimeException('cannot run ' . $command[0]);
    }
    $output = [1 => '', 2 => ''];
    $deadline = microtime(true) + $seconds;
    $open = [1 => $pipes[1], 2 => $pipes[2]];
    while ($open !== []) {
        $left = $deadline - microtime(true);
        if ($left <= 0) {
            proc_terminate($process, SIGKILL);
            proc_close($process);
            throw new RuntimeException("the cold call took more than $seconds s");
        }
        $read = array_values($open);
        $write = $except = null;
        if (stream_select($read, $write, $except, (int) ceil($left)) === false) {
            // E.g. a descriptor numbered past FD_SETSIZE (1024): the child's
            // output would be lost, so its row fails with the reason.
            proc_terminate($process, SIGKILL);
            proc_close($process);
            throw new RuntimeException('cannot watch the cold call\'s output (stream_select failed)');
        }
        foreach ($read as $stream) {
            $fd = array_search($stream, $open, true);
            $chunk = fread($stream, 65536);
            if ($chunk === '' || $chunk === false) {
                fclose($stream);
                unset($open[$fd]);
            } else {
                $output[$fd] .= $chunk;
            }
        }
    }
    return [proc_close($process), $output[1], $output[2]];
}

function wsb_row(string $name, int $index, int $repetitions, array $times_ns): array
{
    sort($times_ns);
    $n = count($times_ns);
    if ($n === 0) {
        throw new RuntimeException('no call completed in the time allowed');
    }
    $mean = array_sum($times_ns) / $n;
    $median = $n % 2 ? $times_ns[intdiv($n, 2)]
        : ($times_ns[$n / 2 - 1] + $times_ns[$n / 2]) / 2;
    $row = [
        'name' => $name, 'run_name' => $name, 'run_type' => 'iteration',
        'repetitions' => $repetitions, 'repetition_index' => $index, 'threads' => 1,
        'iterations' => $n, 'real_time' => $mean, 'cpu_time' => $mean, 'time_unit' => 'ns',
        'n' => $n, 'p50_us' => $median / 1e3, 'max_us' => $times_ns[$n - 1] / 1e3,
    ];
    // Nearest rank, and only where the calls support it (as bench does).
    if ($n >= 10) {
        $row['p90_us'] = $times_ns[max(0, intdiv(90 * $n + 99, 100) - 1)] / 1e3;
    }
    if ($n >= 100) {
        $row['p99_us'] = $times_ns[max(0, intdiv(99 * $n + 99, 100) - 1)] / 1e3;
    }
    return $row;
}

function wsb_error_row(string $name, int $index, int $repetitions, string $message): array
{
    return ['name' => $name, 'run_name' => $name, 'run_type' => 'iteration',
        'repetitions' => $repetitions, 'repetition_index' => $index, 'error_occurred' => true,
        'error_message' => $message];
}
