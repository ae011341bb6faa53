package wsbench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Java clients against wsbench's native servers; prints Google Benchmark JSON that
 * scripts/summarize.py reads as round trips, one row per repetition:
 *
 * <pre>
 * rtt/STACK/java-CLIENT/OP[/PAYLOAD]/steady  calls after warm-up on one client (p50_us over them)
 * rtt/STACK/java-CLIENT/OP[/PAYLOAD]/cold    first call of a fresh JVM, client construction
 *                                             included: one JVM per repetition
 * rtt/STACK/java-CLIENT/OP[/PAYLOAD]/warmup  the calls after the cold one in that JVM
 *                                             (JIT warm-up): --warmup-calls or --warmup-seconds
 * </pre>
 */
@Command(name = "runtimes/java/run", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Java 17 clients (CXF, Jersey, Apache XML-RPC) against wsbench-server.")
public final class Driver implements Callable<Integer> {
  /** Clients by name, with the native stack each calls. */
  static final Map<String, String> STACKS = new LinkedHashMap<>();

  static {
    STACKS.put("cxf", "gsoap");
    STACKS.put("jersey-json", "beast");
    STACKS.put("jersey-xml", "beast");
    STACKS.put("jersey-protobuf", "beast");
    STACKS.put("xmlrpc", "xmlrpc-c");
  }

  @Option(names = "--server", description = "the wsbench-server binary") String server;

  @Option(names = "--payload-json", required = true, description = "tests/payload_json")
  String payloadJson;

  @Option(names = "--out", description = "write the JSON here (default: stdout)") String out;

  @Option(names = "--clients", split = ",", description = "of: ${DEFAULT-VALUE}")
  List<String> clients = new ArrayList<>(STACKS.keySet());

  @Option(names = "--repetitions", description = "per case (default: ${DEFAULT-VALUE})")
  int repetitions = 6;

  @Option(names = "--calls", description = "timed steady calls per repetition (${DEFAULT-VALUE})")
  int calls = 200;

  @Option(names = "--max-seconds", description = "bound of a steady repetition (${DEFAULT-VALUE})")
  double maxSeconds = 2;

  @Option(names = "--warmup-calls",
      description =
          "calls after the cold one: the warmup row, and before steady (${DEFAULT-VALUE})")
  int warmupCalls = 1000;

  @Option(names = "--warmup-seconds", description = "bound of those warm-ups (${DEFAULT-VALUE})")
  double warmupSeconds = 2;

  @Option(names = "--quick", description = "get of 200 and 3200 items only") boolean quick;

  @Option(names = "--operations", split = ",",
      description = "only these, e.g. ping,get/ints/3200,send/message-a/100 (default: all)")
  List<String> operations;

  @Option(names = "--cold-operations", split = ",",
      description = "operations with cold and warmup rows (default: all; each row is a JVM)")
  List<String> coldOperations;

  @Option(names = "--java-server",
      description = "also serve the operations from a Java server (CXF, Jersey) and call it")
  boolean javaServer;

  @Option(names = "--cold-call", arity = "3", hidden = true) List<String> coldCall;

  private static String commandLine = "";

  public static void main(String[] args) {
    commandLine = "runtimes/java/run " + String.join(" ", args);
    // CXF logs every service it builds at INFO; only problems belong on stderr.
    Logger.getLogger("").setLevel(Level.WARNING);
    System.exit(new CommandLine(new Driver()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (coldCall != null)
      return coldCall();
    if (server == null)
      throw new CommandLine.ParameterException(new CommandLine(this), "--server is required");
    for (String name : clients)
      if (!STACKS.containsKey(name))
        throw new CommandLine.ParameterException(
            new CommandLine(this), "clients are " + String.join(",", STACKS.keySet()));
    try {
      if (coldOperations != null)
        for (String op : coldOperations) Operation.Kind.of(op);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    if (repetitions < 1 || calls < 1 || warmupCalls < 0)
      throw new CommandLine.ParameterException(
          new CommandLine(this), "repetitions and calls at least 1, warm-up calls at least 0");

    final List<Operation> ops = new ArrayList<>();
    for (Operation op : Operation.all(quick))
      if (operations == null || operations.contains(op.path()))
        ops.add(op);
    if (ops.isEmpty())
      throw new CommandLine.ParameterException(new CommandLine(this), "no such operations");
    final Catalogue catalogue = new Catalogue(payloadJson, labels(ops));
    final ArrayNode rows = Catalogue.MAPPER.createArrayNode();
    final Process process =
        new ProcessBuilder(server).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      final Map<String, String> endpoints = endpoints(process, STACKS.values());
      measure(rows, clients, ops, catalogue,
          c -> endpoints.get(STACKS.get(c)), c -> "rtt/" + STACKS.get(c) + "/java-" + c);
    } finally {
      stop(process);
    }
    if (javaServer) {
      final List<String> command = javaCommand(JavaServer.class);
      command.add(payloadJson);
      command.addAll(labels(ops));
      final Process java =
          new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      try {
        final Map<String, String> endpoints = endpoints(java, List.of("java-soap", "java-rest"));
        final List<String> served = new ArrayList<>();
        for (String c : clients)
          if (!c.equals("xmlrpc"))
            served.add(c);
        measure(rows, served, ops, catalogue,
            c
            -> endpoints.get(c.equals("cxf") ? "java-soap" : "java-rest"),
            c -> "rtt/java-server/java-" + c);
      } finally {
        java.getOutputStream().close(); // its signal to stop
        stop(java);
      }
    }

    final ObjectNode result = Catalogue.MAPPER.createObjectNode();
    result.set("context", context());
    result.set("benchmarks", rows);
    final String text =
        Catalogue.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(result);
    if (out != null)
      Files.writeString(Paths.get(out), text + "\n");
    else
      System.out.println(text);
    for (var r : rows)
      if (r.has("error_occurred"))
        return 1;
    return 0;
  }

  /** Steady, then cold and warm-up rows of `names` against the address each maps to. */
  private void measure(ArrayNode rows, List<String> names, List<Operation> ops, Catalogue catalogue,
      Function<String, String> address, Function<String, String> prefix) {
    for (String name : names)
      for (Operation op : ops)
        for (int i = 0; i < repetitions; ++i) {
          final String caseName = prefix.apply(name) + "/" + op.path() + "/steady";
          try {
            rows.add(row(caseName, i, steady(name, address.apply(name), op, catalogue)));
          } catch (Exception | LinkageError e) {
            rows.add(errorRow(caseName, i, e));
          }
          progress(caseName, i);
        }
    for (String name : names)
      for (Operation op : ops)
        for (int i = 0; i < repetitions; ++i) {
          if (coldOperations != null && !coldOperations.contains(op.kind.name))
            continue;
          final String caseName = prefix.apply(name) + "/" + op.path();
          try {
            final long[] times = cold(name, address.apply(name), op);
            rows.add(row(caseName + "/cold", i, Arrays.copyOf(times, 1)));
            if (times.length > 1)
              rows.add(row(caseName + "/warmup", i, Arrays.copyOfRange(times, 1, times.length)));
          } catch (Exception | LinkageError e) {
            rows.add(errorRow(caseName + "/cold", i, e));
          }
          progress(caseName + "/cold", i);
        }
  }

  private static void stop(Process process) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS))
      process.destroyForcibly();
  }

  /** `java` with this JVM's flags and class path, running `main`'s class. */
  private static List<String> javaCommand(Class<?> main) {
    final List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    return command;
  }

  static Client make(String name, String address) throws Exception {
    switch (name) {
      case "cxf":
        return new CxfClient(address);
      case "jersey-json":
        return new JerseyClient(address, JerseyClient.Format.JSON);
      case "jersey-xml":
        return new JerseyClient(address, JerseyClient.Format.XML);
      case "jersey-protobuf":
        return new JerseyClient(address, JerseyClient.Format.PROTOBUF);
      case "xmlrpc":
        return new XmlrpcClient(address);
      default:
        throw new IllegalArgumentException("no client " + name);
    }
  }

  /** Per-call times (ns) of one client after a verified first call and the warm-up. */
  private long[] steady(String name, String address, Operation op, Catalogue catalogue)
      throws Exception {
    try (Client client = make(name, address);
         Session session = new Session(client, op, catalogue)) {
      session.timedCall();
      repeat(session, warmupCalls, warmupSeconds);
      return repeat(session, calls, maxSeconds);
    }
  }

  /** Up to `count` verified calls, stopping after `seconds`; their times (ns). */
  private static long[] repeat(Session session, int count, double seconds) throws Exception {
    final long deadline = System.nanoTime() + (long) (seconds * 1e9);
    final long[] times = new long[count];
    int n = 0;
    while (n < count && (n == 0 || System.nanoTime() < deadline)) times[n++] = session.timedCall();
    return Arrays.copyOf(times, n);
  }

  /** A fresh JVM's first call (ns, client construction included), then its warm-up calls. */
  private long[] cold(String name, String address, Operation op) throws Exception {
    final List<String> command = javaCommand(Driver.class);
    command.addAll(List.of("--payload-json", payloadJson, "--warmup-calls",
        Integer.toString(warmupCalls), "--warmup-seconds", Double.toString(warmupSeconds),
        "--cold-call", name, address, op.path()));
    final File errors = File.createTempFile("wsbench-java-cold", ".log");
    try {
      final Process child = new ProcessBuilder(command).redirectError(errors).start();
      final String output =
          new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!child.waitFor(120, TimeUnit.SECONDS)) {
        child.destroyForcibly();
        throw new IOException("the cold call took more than 120 s");
      }
      if (child.exitValue() != 0) {
        // The last line that is not a stack frame: a stack trace's
        // innermost "Caused by:", or the message.
        String reason = "the cold call exited with " + child.exitValue();
        for (String line : Files.readAllLines(errors.toPath()))
          if (!line.isBlank() && !Character.isWhitespace(line.charAt(0))) reason = line;
        throw new IOException(reason);
      }
      final String[] fields = output.strip().split("\\s+");
      final long[] times = new long[fields.length];
      for (int i = 0; i < fields.length; ++i) times[i] = Long.parseLong(fields[i]);
      return times;
    } finally {
      Files.deleteIfExists(errors.toPath());
    }
  }

  /** The child's side: prints the cold time, then each warm-up call's, in ns. */
  private int coldCall() throws Exception {
    final String name = coldCall.get(0);
    final String address = coldCall.get(1);
    final String path = coldCall.get(2);
    final int slash = path.indexOf('/');
    final Operation op =
        new Operation(Operation.Kind.of(slash < 0 ? path : path.substring(0, slash)),
            slash < 0 ? null : path.substring(slash + 1));
    final Catalogue catalogue =
        new Catalogue(payloadJson, op.label == null ? List.of() : List.of(op.label));
    final long start = System.nanoTime();
    final Client client = make(name, address);
    final long constructed = System.nanoTime() - start;
    try (client; Session session = new Session(client, op, catalogue)) {
      // Not timed: the argument (built above) and the call's set-up.
      session.setUp();
      final long callStart = System.nanoTime();
      session.call();
      final long cold = constructed + System.nanoTime() - callStart;
      session.checkAndCleanUp();
      final StringBuilder line = new StringBuilder(Long.toString(cold));
      if (warmupCalls > 0)
        for (long t : repeat(session, warmupCalls, warmupSeconds)) line.append(' ').append(t);
      System.out.println(line);
    } catch (Session.VerificationError e) {
      System.err.println(e.getMessage());
      return 1;
    }
    return 0;
  }

  private static List<String> labels(List<Operation> ops) {
    final List<String> out = new ArrayList<>();
    for (Operation op : ops)
      if (op.label != null && !out.contains(op.label))
        out.add(op.label);
    return out;
  }

  private static Map<String, String> endpoints(Process process, java.util.Collection<String> wanted)
      throws IOException {
    final BufferedReader lines =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    final Map<String, String> out = new HashMap<>();
    while (!out.keySet().containsAll(wanted)) {
      final String line = lines.readLine();
      if (line == null)
        throw new IOException("the server exited before printing its endpoints");
      final String[] fields = line.strip().split("\\s+");
      if (fields.length == 2)
        out.put(fields[0], fields[1]);
    }
    return out;
  }

  private ObjectNode row(String name, int index, long[] times) {
    final long[] ordered = times.clone();
    Arrays.sort(ordered);
    final int n = ordered.length;
    double sum = 0;
    for (long t : ordered) sum += t;
    final double mean = sum / n;
    final double median = n % 2 == 1 ? ordered[n / 2] : (ordered[n / 2 - 1] + ordered[n / 2]) / 2.0;
    final ObjectNode out = rowHead(name, index);
    out.put("threads", 1);
    out.put("iterations", n);
    out.put("real_time", mean);
    out.put("cpu_time", mean);
    out.put("time_unit", "ns");
    out.put("n", n);
    out.put("p50_us", median / 1e3);
    out.put("max_us", ordered[n - 1] / 1e3);
    // Nearest rank, and only where the calls support it (as bench does).
    if (n >= 10)
      out.put("p90_us", ordered[Math.max(0, (90 * n + 99) / 100 - 1)] / 1e3);
    if (n >= 100)
      out.put("p99_us", ordered[Math.max(0, (99 * n + 99) / 100 - 1)] / 1e3);
    return out;
  }

  private ObjectNode errorRow(String name, int index, Throwable e) {
    final ObjectNode out = rowHead(name, index);
    out.put("error_occurred", true);
    out.put("error_message", e.getMessage() != null ? e.getMessage() : e.toString());
    return out;
  }

  private ObjectNode rowHead(String name, int index) {
    final ObjectNode out = Catalogue.MAPPER.createObjectNode();
    out.put("name", name);
    out.put("run_name", name);
    out.put("run_type", "iteration");
    out.put("repetitions", repetitions);
    out.put("repetition_index", index);
    return out;
  }

  private static void progress(String caseName, int index) {
    System.err.println(caseName + ": repetition " + (index + 1));
  }

  private ObjectNode context() throws IOException {
    final ObjectNode out = Catalogue.MAPPER.createObjectNode();
    final var os = ManagementFactory.getOperatingSystemMXBean();
    out.put("date", Instant.now().toString());
    out.put("host_name", InetAddress.getLocalHost().getHostName());
    out.put("num_cpus", Runtime.getRuntime().availableProcessors());
    out.put("load_avg", String.format("%.2f", os.getSystemLoadAverage()));
    out.put("kernel", System.getProperty("os.version"));
    out.put("command_line", commandLine);
    out.put("runtime", "java " + Runtime.version());
    out.put("java_vm",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    out.put(
        "jvm_flags", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
    out.put("jvm_gc", gcNames());
    // The libraries exactly as loaded: the jar names carry their versions.
    final ArrayNode jars = out.putArray("java_libraries");
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator))
      if (entry.endsWith(".jar"))
        jars.add(Paths.get(entry).getFileName().toString());
    out.put("warmup_calls", warmupCalls);
    out.put("warmup_seconds", warmupSeconds);
    out.put("wsbench_placement", "none (client and server threads unpinned)");
    return out;
  }

  private static String gcNames() {
    final List<String> names = new ArrayList<>();
    for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) names.add(gc.getName());
    return String.join(", ", names);
  }
}
