<?php
// What the PHP server keeps between requests, in its data directory (a PHP
// request starts with nothing): the documents it serves, the payloads as
// PHP files returning the json codec's body (compiled once by OPcache),
// and the queues, one JSON file each, changed under flock.

declare(strict_types=1);

final class WsbStore
{
    public function __construct(private string $dir)
    {
    }

    public function documentPath(string $name): string
    {
        return "{$this->dir}/$name";
    }

    public function document(string $name): string
    {
        return (string) file_get_contents($this->documentPath($name));
    }

    /** The catalogue body of $label ("ints/200"), or null if not here. */
    public function payload(string $label): ?array
    {
        if (!preg_match('#^([a-z]+(?:-[a-z]+)?)/([0-9]+)$#', $label, $m)) {
            return null;
        }
        $file = "{$this->dir}/payloads/{$m[1]}-{$m[2]}.php";
        return is_file($file) ? require $file : null;
    }

    /** A new, empty queue's id. */
    public function register(): string
    {
        $counter = fopen("{$this->dir}/queues/next", 'c+');
        flock($counter, LOCK_EX);
        $id = (int) stream_get_contents($counter) + 1;
        ftruncate($counter, 0);
        rewind($counter);
        fwrite($counter, (string) $id);
        file_put_contents($this->queueFile((string) $id), '[]');
        fclose($counter);
        return (string) $id;
    }

    /** Appends a message; null if there is no such queue. */
    public function send(string $queue, array $message): ?bool
    {
        return $this->change($queue, function (array $messages) use ($message) {
            $messages[] = $message;
            return [$messages, true];
        });
    }

    /** Removes and returns every message, oldest first; null if no queue. */
    public function receive(string $queue): ?array
    {
        return $this->change($queue, fn (array $messages) => [[], $messages]);
    }

    /** Deletes the queue; null if there was none. */
    public function unregister(string $queue): ?bool
    {
        $file = $this->queueFile($queue);
        return $file !== null && is_file($file) && unlink($file) ? true : null;
    }

    private function queueFile(string $queue): ?string
    {
        return ctype_digit($queue) ? "{$this->dir}/queues/$queue.json" : null;
    }

    /** Runs $change(messages) -> [new messages, result] under the queue's lock. */
    private function change(string $queue, callable $change): mixed
    {
        $file = $this->queueFile($queue);
        if ($file === null || !is_file($file)) {
            return null;
        }
        $handle = fopen($file, 'r+');
        flock($handle, LOCK_EX);
        [$messages, $result] = $change(json_decode(stream_get_contents($handle), true,
            512, JSON_THROW_ON_ERROR));
        ftruncate($handle, 0);
        rewind($handle);
        fwrite($handle, json_encode($messages, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR));
        fclose($handle);
        return $result;
    }
}
