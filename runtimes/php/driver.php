<?php
// PHP clients (clients.php) against wsbench's native servers: every
// operation of the runtime contract (E1 ping; E3 get of ints, strings and
// objects at 200-3200 items; E5 register, send and receive of
// message-a/100, unregister), each reply verified against the catalogue
// outside the timed call. Writes Google Benchmark JSON, one row per
// repetition, as runtimes/python/driver.py does:
//   rtt/<stack>/php-<client>/<operation>[/<payload>]/steady
//       the calls after one warm-up call, on one client (p50_us over them);
//   rtt/<stack>/php-<client>/<operation>[/<payload>]/cold
//       the first call of a fresh PHP process, the client's construction
//       included (SoapClient's loading of the WSDL); one process each.
// It starts wsbench-server itself (127.0.0.1, ephemeral ports) and stops it.

declare(strict_types=1);

require_once __DIR__ . '/clients.php';
require_once __DIR__ . '/runner.php';
require_once __DIR__ . '/php_server.php';
require_once __DIR__ . '/native_clients.php';

const WSB_USAGE = <<<'TEXT'
usage: driver.php --server PATH --payload-json PATH [--out FILE] [--repetitions N]
                  [--calls N] [--max-seconds S] [--quick] [--clients soap,xmlrpc,json,xml]
                  [--servers native,php]
  --server        the wsbench-server binary
  --payload-json  the payload_json helper (tests/payload_json)
  --out           write the JSON here (default: stdout)
  --repetitions   rows per case (default 6)
  --calls         timed calls per steady repetition (default 200)
  --max-seconds   time a steady repetition may take, whatever --calls says (default 2)
  --quick         E3 at 200 and 3200 items only
  --clients       which clients (default: all four)
  --servers       native: wsbench-server's stacks; php: the PHP server (php -S
                  server/router.php) (default: both)
  --filter        run only the cases whose name matches this regular expression
  --bench         bench, whose native clients also call the PHP server
                  (default: the one beside --server; none if it is not there)

TEXT;

/** --name VALUE, --name=VALUE and the flags --quick, --help; anything else is refused. */
function wsb_parse_arguments(array $arguments, array $valued, array $flags, callable $fail): array
{
    $given = [];
    for ($i = 0; $i < count($arguments); ++$i) {
        if (!preg_match('/^--([a-z-]+)(?:=(.*))?$/s', $arguments[$i], $m)) {
            $fail('unknown argument ' . $arguments[$i]);
        }
        $name = $m[1];
        if (in_array($name, $flags, true) && !isset($m[2])) {
            $value = true;
        } elseif (!in_array($name, $valued, true)) {
            $fail(in_array($name, $flags, true) ? "--$name takes no value" : "unknown option --$name");
        } elseif (isset($m[2])) {
            $value = $m[2];
        } elseif ($i + 1 < count($arguments)) {
            $value = $arguments[++$i];
        } else {
            $fail("--$name needs a value");
        }
        if (isset($given[$name])) {
            $fail("--$name given twice");
        }
        $given[$name] = $value;
    }
    return $given;
}

function wsb_options(): array
{
    global $argv;
    $fail = function (string $why): never {
        fwrite(STDERR, "driver.php: $why\n" . WSB_USAGE);
        exit(2);
    };
    $given = wsb_parse_arguments(array_slice($argv, 1), ['server', 'payload-json', 'out',
        'repetitions', 'calls', 'max-seconds', 'clients', 'servers', 'bench', 'filter'],
        ['quick', 'help'], $fail);
    if (isset($given['help'])) {
        fwrite(STDOUT, WSB_USAGE);
        exit(0);
    }
    $options = [
        'server' => $given['server'] ?? $fail('--server is required'),
        'payload_json' => $given['payload-json'] ?? $fail('--payload-json is required'),
        'out' => $given['out'] ?? null,
        'repetitions' => filter_var($given['repetitions'] ?? 6, FILTER_VALIDATE_INT),
        'calls' => filter_var($given['calls'] ?? 200, FILTER_VALIDATE_INT),
        'max_seconds' => filter_var($given['max-seconds'] ?? 2, FILTER_VALIDATE_FLOAT),
        'quick' => isset($given['quick']),
        'clients' => explode(',', $given['clients'] ?? implode(',', array_keys(WSB_CLIENTS))),
        'servers' => explode(',', $given['servers'] ?? 'native,php'),
        'bench' => $given['bench'] ?? dirname($given['server'] ?? '.') . '/bench',
        'filter' => '#' . str_replace('#', '\\#', $given['filter'] ?? '') . '#',
    ];
    if (@preg_match($options['filter'], '') === false) {
        $fail('--filter is not a regular expression');
    }
    foreach (['server' => 'server', 'payload_json' => 'payload-json'] as $program => $flag) {
        if (!is_file($options[$program]) || !is_executable($options[$program])) {
            $fail("--$flag {$options[$program]} is not an executable file");
        }
    }
    if (array_diff($options['servers'], ['native', 'php']) !== []) {
        $fail('servers are native and php');
    }
    if (!is_int($options['repetitions']) || $options['repetitions'] < 1
        || !is_int($options['calls']) || $options['calls'] < 1
        || !is_float($options['max_seconds']) || $options['max_seconds'] <= 0) {
        $fail('--repetitions and --calls must be whole numbers of at least 1, --max-seconds positive');
    }
    $unknown = array_diff($options['clients'], array_keys(WSB_CLIENTS));
    if ($unknown !== []) {
        $fail('unknown client ' . implode(',', $unknown) . '; clients are '
            . implode(',', array_keys(WSB_CLIENTS)));
    }
    return $options;
}

/** Starts wsbench-server; returns [process, stack => address]. */
function wsb_start_server(string $path): array
{
    $process = proc_open([$path], [1 => ['pipe', 'w']], $pipes);
    if ($process === false) {
        throw new RuntimeException("cannot start $path");
    }
    $endpoints = [];
    // It prints every stack it serves; the clients here call these three.
    while (array_diff(['gsoap', 'xmlrpc-c', 'beast'], array_keys($endpoints))) {
        $line = fgets($pipes[1]);
        if ($line === false) {
            throw new RuntimeException('wsbench-server exited before printing its endpoints');
        }
        [$stack, $address] = explode(' ', trim($line)) + [1 => ''];
        if ($stack !== 'floor') {
            $endpoints[$stack] = $address;
        }
    }
    return [$process, $endpoints, $pipes[1]];
}

function wsb_stop(mixed $process, int $seconds): void
{
    proc_terminate($process, SIGTERM);
    $deadline = microtime(true) + $seconds;
    while (proc_get_status($process)['running']) {
        if (microtime(true) > $deadline) {
            proc_terminate($process, SIGKILL);
            break;
        }
        usleep(10000);
    }
    proc_close($process);
}

function wsb_context(array $extra): array
{
    global $argv;
    $load = sys_getloadavg();
    return array_merge([
        'date' => gmdate('Y-m-d\TH:i:s\Z'),
        'host_name' => gethostname(),
        'num_cpus' => (int) trim((string) shell_exec('nproc')),
        'load_avg' => implode(' ', array_map(fn ($v) => sprintf('%.2f', $v), $load)),
        'kernel' => php_uname('r'),
        'command_line' => implode(' ', $argv),
        'runtime' => 'php ' . PHP_VERSION,
        'php_extensions' => sprintf('soap %s, xmlrpc %s, curl %s (libcurl %s), simplexml %s, json %s, libxml %s',
            phpversion('soap'), phpversion('xmlrpc'), phpversion('curl'),
            curl_version()['version'], phpversion('simplexml'), phpversion('json'),
            LIBXML_DOTTED_VERSION),
        // PHP's CLI leaves OPcache off (opcache.enable_cli=0): every process
        // compiles the scripts anew, and there is no JIT.
        'php_opcache' => ini_get('opcache.enable_cli') ? 'on (opcache.enable_cli=1)'
            : 'off (opcache.enable_cli=0, the PHP CLI default; no JIT)',
        'php_soap_wsdl_cache' => 'memory: each process parses the WSDL once, no disk cache',
        'wsbench_placement' => 'none (client and server threads unpinned)',
    ], $extra);
}

/**
 * [row stack, client name, address] for each client and server: the native
 * stacks, then the PHP server (server/router.php), which serves them all.
 */
function wsb_targets(array $options, array $endpoints, ?WsbPhpServer $php_server): array
{
    $targets = [];
    foreach ($options['clients'] as $name) {
        $stack = WSB_CLIENTS[$name][1];
        $targets[] = [$stack, $name, $endpoints[$stack] ?? throw new RuntimeException("no $stack")];
    }
    if ($php_server !== null) {
        foreach ($options['clients'] as $name) {
            $targets[] = ['php-server', $name, $php_server->address];
        }
    }
    return $targets;
}

function wsb_main(): int
{
    $options = wsb_options();
    $sizes = $options['quick'] ? [200, 3200] : [200, 400, 800, 1600, 3200];
    $operations = wsb_operations($sizes);
    $labels = array_values(array_unique(array_filter(array_column($operations, 1))));
    $payloads = wsb_catalogue($options['payload_json'], $labels);
    // $server_out stays open: the server must not find its stdout closed.
    [$server, $endpoints, $server_out] = wsb_start_server($options['server']);
    $php_server = null;
    $rows = [];
    $repetitions = $options['repetitions'];
    try {
        if (in_array('php', $options['servers'], true)) {
            $php_server = new WsbPhpServer($endpoints['gsoap'], $payloads);
        }
        $targets = wsb_targets($options, $endpoints, $php_server);
        if (!in_array('native', $options['servers'], true)) {
            $targets = array_values(array_filter($targets, fn ($t) => $t[0] === 'php-server'));
        }
        foreach (['steady', 'cold'] as $phase) {
            foreach ($targets as [$stack, $name, $address]) {
                $class = WSB_CLIENTS[$name][0];
                foreach ($operations as [$operation, $label]) {
                    $case = wsb_case_name($stack, "php-$name", $operation, $label, $phase);
                    if (!preg_match($options['filter'], $case)) {
                        continue;
                    }
                    $limit = $stack === 'php-server' ? wsb_php_server_limit($name, $label) : null;
                    for ($index = 0; $index < $repetitions; ++$index) {
                        if ($limit !== null) {
                            $rows[] = wsb_error_row($case, $index, $repetitions, $limit);
                            continue;
                        }
                        try {
                            $times = $phase === 'steady'
                                ? wsb_steady($class, $address, $operation, $label, $payloads,
                                    $options['calls'], $options['max_seconds'])
                                : [wsb_cold($options['payload_json'], $name, $address, $operation,
                                    $label, $payloads)];
                            $rows[] = wsb_row($case, $index, $repetitions, $times);
                        } catch (Throwable $e) {
                            // Reported in the row, as bench does; never a time.
                            $rows[] = wsb_error_row($case, $index, $repetitions, $e->getMessage());
                        }
                        fprintf(STDERR, "%s: repetition %d of %d\n", $case, $index + 1,
                            $repetitions);
                    }
                }
            }
        }
        if ($php_server !== null && is_executable($options['bench'])) {
            $rows = array_merge($rows, array_filter(wsb_native_client_rows($options['bench'],
                $php_server->address, $sizes, $repetitions, $options['calls']),
                fn (array $row) => preg_match($options['filter'], $row['name'])));
        }
    } finally {
        $php_server?->stop();
        wsb_stop($server, 30);
    }
    $text = json_encode(['context' => wsb_context($php_server === null ? [] : [
        // OPcache is on under the built-in server (its SAPI is not "cli").
        'php_server' => 'php -S (built-in server, one worker, Connection: close after every '
            . 'reply), server/router.php; OPcache on; queues in files',
    ]), 'benchmarks' => $rows],
        JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\n";
    if ($options['out'] !== null) {
        file_put_contents($options['out'], $text);
    } else {
        echo $text;
    }
    foreach ($rows as $row) {
        if (!empty($row['error_occurred']) && !str_starts_with($row['error_message'], 'unsupported:')) {
            return 1;
        }
    }
    return 0;
}

try {
    exit(wsb_main());
} catch (Throwable $e) {
    fwrite(STDERR, 'driver.php: ' . $e->getMessage() . "\n");
    exit(1);
}
