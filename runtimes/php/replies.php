<?php
// The payload catalogue as the suite writes it (tests/payload_json prints the
// json codec's bodies) and a deep comparison of a client's reply with it.
// Each client turns its reply into that shape (clients.php); doubles are
// compared exactly unless the client's protocol declares a rounding
// (xmlrpc-c: 1e-14 relative, as the suite's xmlrpc codec).

declare(strict_types=1);

/** label => the json codec's body of that payload, as PHP arrays. */
function wsb_catalogue(string $payload_json, array $labels): array
{
    if ($labels === []) {
        return [];
    }
    $command = array_merge([$payload_json], $labels);
    $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    if ($process === false) {
        throw new RuntimeException("cannot run $payload_json");
    }
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    fclose($pipes[1]);
    fclose($pipes[2]);
    $status = proc_close($process);
    if ($status !== 0) {
        throw new RuntimeException("$payload_json exited with $status: " . trim($err));
    }
    $lines = explode("\n", rtrim($out, "\n"));
    if (count($lines) !== count($labels)) {
        throw new RuntimeException(sprintf('%s printed %d lines for %d labels', $payload_json,
            count($lines), count($labels)));
    }
    $bodies = [];
    foreach ($labels as $i => $label) {
        $bodies[$label] = json_decode($lines[$i], true, 512, JSON_THROW_ON_ERROR);
    }
    return $bodies;
}

/** The first place where $got differs from $want, or null. */
function wsb_difference(mixed $got, mixed $want, string $where, float $relative_tolerance): ?string
{
    if (is_float($want) || is_float($got)) {
        if (!is_int($got) && !is_float($got) || !is_int($want) && !is_float($want)) {
            return sprintf('%s: %s is not a number like %s', $where, wsb_show($got), wsb_show($want));
        }
        $scale = max(abs((float) $got), abs((float) $want));
        if ((float) $got !== (float) $want && abs($got - $want) > $relative_tolerance * $scale) {
            return sprintf('%s: %s != %s', $where, wsb_show($got), wsb_show($want));
        }
        return null;
    }
    if (is_array($want)) {
        if (!is_array($got)) {
            return sprintf('%s: %s, not %s', $where, get_debug_type($got),
                array_is_list($want) ? 'a list' : 'a struct');
        }
        if (array_is_list($want)) {
            if (!array_is_list($got) || count($got) !== count($want)) {
                return sprintf('%s: %d items%s, want %d', $where, count($got),
                    array_is_list($got) ? '' : ' (not a list)', count($want));
            }
        } else {
            $got_keys = array_keys($got);
            $want_keys = array_keys($want);
            sort($got_keys);
            sort($want_keys);
            if ($got_keys !== $want_keys) {
                return sprintf('%s: members %s, want %s', $where, implode(',', $got_keys),
                    implode(',', $want_keys));
            }
        }
        foreach ($want as $key => $value) {
            $found = wsb_difference($got[$key], $value, "$where.$key", $relative_tolerance);
            if ($found !== null) {
                return $found;
            }
        }
        return null;
    }
    if ($got !== $want) {
        return sprintf('%s: %s %s != %s %s', $where, get_debug_type($got), wsb_show($got),
            get_debug_type($want), wsb_show($want));
    }
    return null;
}

function wsb_show(mixed $value): string
{
    $text = var_export($value, true);
    return strlen($text) <= 80 ? $text : substr($text, 0, 77) . '...';
}

/** Throws when $got differs from $want: a wrong reply is never timed. */
function wsb_check(mixed $got, mixed $want, string $what, float $relative_tolerance): void
{
    $found = wsb_difference($got, $want, $what, $relative_tolerance);
    if ($found !== null) {
        throw new RuntimeException('verification failed: ' . $found);
    }
}

/** The catalogue's message with its 64-bit fields as decimal strings. */
function wsb_message_int64_as_strings(array $message): array
{
    $message['timestamp'] = (string) $message['timestamp'];
    if (isset($message['records'])) {
        foreach ($message['records'] as &$record) {
            $record['sequence'] = (string) $record['sequence'];
            $record['created'] = (string) $record['created'];
        }
    }
    return $message;
}
