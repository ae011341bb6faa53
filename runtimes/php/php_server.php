<?php
// Starts and stops the PHP server (server/router.php under PHP's built-in
// server, `php -S 127.0.0.1:PORT`) for driver.php: fills its data
// directory with the WSDL and XOP schema the gsoap server publishes and the
// catalogue payloads as PHP files, picks a free port, waits until it
// accepts connections.

declare(strict_types=1);

/** What the PHP server cannot serve as the native servers do (docs/runtimes/php.md). */
const WSB_PHP_SERVER_CLOSES = 'unsupported: the PHP built-in server closes the connection '
    . 'after every reply, and this native client keeps one connection';

/**
 * Why the PHP server cannot serve a PHP client's case equally, or null: such a
 * case is a row with the reason, decided before it runs, never a failure.
 */
function wsb_php_server_limit(string $client, ?string $label): ?string
{
    if ($client === 'xmlrpc' && $label !== null && str_starts_with($label, 'objects/')) {
        return 'unsupported: xmlrpc-epi (the PHP server) writes doubles with six decimals '
            . '(%f), so the objects\' doubles do not come back';
    }
    return null;
}

final class WsbPhpServer
{
    public string $address = '';
    private mixed $process = null;
    private string $dir;

    /** @param array $payloads label => the json codec's body */
    public function __construct(string $gsoap_address, array $payloads)
    {
        $this->dir = sys_get_temp_dir() . '/wsbench-php-server-' . bin2hex(random_bytes(6));
        mkdir("{$this->dir}/payloads", 0700, true);
        mkdir("{$this->dir}/queues", 0700);
        foreach (['wsbench.wsdl' => '/?wsdl', 'xop.xsd' => '/xop.xsd'] as $name => $path) {
            $document = file_get_contents("http://$gsoap_address$path");
            if ($document === false) {
                throw new RuntimeException("cannot fetch http://$gsoap_address$path");
            }
            file_put_contents("{$this->dir}/$name", $document);
        }
        foreach ($payloads as $label => $body) {
            file_put_contents("{$this->dir}/payloads/" . str_replace('/', '-', $label) . '.php',
                "<?php\nreturn " . var_export($body, true) . ";\n");
        }
        for ($attempt = 1; $this->process === null; ++$attempt) {
            $this->start($attempt);
        }
    }

    private function start(int $attempt): void
    {
        // A port the kernel just handed out and took back: another process
        // may take it first, so a failed start tries again.
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($probe, false);
        fclose($probe);
        $log = fopen("{$this->dir}/server.log", 'a');
        $process = proc_open([PHP_BINARY, '-S', $address, __DIR__ . '/server/router.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => $log, 2 => $log], $pipes, null,
            array_merge(getenv(), ['WSBENCH_PHP_DATA' => $this->dir]));
        fclose($log);
        $deadline = microtime(true) + 10;
        while (microtime(true) < $deadline) {
            if (!proc_get_status($process)['running']) {
                proc_close($process);
                if ($attempt >= 5) {
                    throw new RuntimeException('php -S did not start: '
                        . trim((string) file_get_contents("{$this->dir}/server.log")));
                }
                return;
            }
            $connection = @stream_socket_client("tcp://$address", $code, $message, 1);
            if ($connection !== false) {
                fclose($connection);
                $this->process = $process;
                $this->address = $address;
                return;
            }
            usleep(20000);
        }
        proc_terminate($process, SIGKILL);
        proc_close($process);
        throw new RuntimeException("php -S did not listen on $address within 10 s");
    }

    public function stop(): void
    {
        if ($this->process !== null) {
            wsb_stop($this->process, 10);
            $this->process = null;
        }
        foreach (['payloads', 'queues'] as $sub) {
            array_map('unlink', glob("{$this->dir}/$sub/*") ?: []);
            rmdir("{$this->dir}/$sub");
        }
        array_map('unlink', glob("{$this->dir}/*") ?: []);
        rmdir($this->dir);
    }
}
