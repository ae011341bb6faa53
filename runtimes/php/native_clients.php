<?php
// The native clients (bench's gsoap/soap, xmlrpc-c/xmlrpc and beast/json
// round trips, `bench --remote STACK=ADDRESS`) against the PHP server: ping
// and get of ints/N, bench's rows renamed to
// rtt/php-server/native-<codec>/<operation>[/<payload>]/steady. bench
// verifies each reply before timing; a case it could not run stays a row,
// with bench's reason. gSOAP's and Beast's clients keep one connection,
// which the PHP server closes after every reply: their rows say so, unrun.

declare(strict_types=1);

/** Google Benchmark rows of bench's native clients against $address. */
function wsb_native_client_rows(string $bench, string $address, array $sizes, int $repetitions,
    int $calls): array
{
    // xmlrpc-c's curl transport reconnects after a close; the others do not.
    $cases = ['xmlrpc-c' => 'xmlrpc'];
    $rows = [];
    foreach (['soap', 'json'] as $codec) {
        foreach (array_merge(['ping'], array_map(fn ($n) => "get/ints/$n", $sizes)) as $op) {
            $name = "rtt/php-server/native-$codec/$op/steady";
            for ($index = 0; $index < $repetitions; ++$index) {
                $rows[] = wsb_error_row($name, $index, $repetitions, WSB_PHP_SERVER_CLOSES);
            }
        }
    }
    $routes = [];
    foreach ($cases as $stack => $codec) {
        $routes[] = "$stack/$codec";
    }
    $filter = '^rtt/(' . implode('|', $routes) . ')/(ping|get/ints/(' . implode('|', $sizes)
        . '))/';
    $out = tempnam(sys_get_temp_dir(), 'wsbench-php-native-');
    $command = [$bench, '--full', "--benchmark_filter=$filter",
        "--benchmark_repetitions=$repetitions", "--iterations=$calls",
        "--benchmark_out=$out", '--benchmark_out_format=json'];
    foreach (array_keys($cases) as $stack) {
        $command[] = "--remote=$stack=$address";
    }
    try {
        [$status, , $err] = wsb_run($command, 600);
        $report = json_decode((string) file_get_contents($out), true);
    } finally {
        unlink($out);
    }
    if (!is_array($report['benchmarks'] ?? null)) {
        $lines = explode("\n", trim($err));
        throw new RuntimeException("bench exited with $status and no JSON: " . end($lines));
    }
    foreach ($report['benchmarks'] as $row) {
        if (($row['run_type'] ?? '') !== 'iteration') {
            continue;
        }
        // rtt/<stack>/<codec>/<operation>[/<payload>]/<placement>[/iterations:N]/manual_time
        $parts = array_values(array_filter(explode('/', $row['name']),
            fn ($p) => $p !== 'manual_time' && !str_starts_with($p, 'iterations:')));
        $name = implode('/', array_merge(['rtt', 'php-server', "native-{$parts[2]}"],
            array_slice($parts, 3, -1), ['steady']));
        $rows[] = array_merge($row, ['name' => $name, 'run_name' => $name,
            'native_placement' => end($parts)]);
    }
    return $rows;
}
