/*
 * Runs Kafka's own partition assignors on groups described on stdin, so that the Python
 * strategies can be compared with the real thing (tests/javaref.py drives it).
 *
 * Run with the Java 17+ source launcher against the jars of tests/java/pom.xml:
 *
 *     java -cp '.cache/java-reference/lib/*' tests/java/AssignorHarness.java < groups.txt
 *
 * Input: many groups, one record per line, fields separated by one TAB. Every string field is
 * percent-encoded UTF-8 (as java.net.URLDecoder reads it), so it never holds a TAB, a comma or a
 * colon. A lone "!" stands for "absent" (null); an empty field is the empty string or an empty list.
 *
 *     group      STRATEGY                      starts a group; range | roundrobin | sticky | cooperative-sticky
 *     partition  TOPIC  NUMBER  RACKS          one partition; RACKS: the racks holding its replicas, comma-separated
 *     member     ID  INSTANCE  RACK  GENERATION  TOPICS  OWNED
 *                                              one member, in group order; INSTANCE (group.instance.id), RACK
 *                                              (client.rack) and GENERATION may be "!"; TOPICS comma-separated;
 *                                              OWNED comma-separated TOPIC:NUMBER pairs, as the member lists them
 *     end                                      runs the assignor on the group
 *
 * Output: for every group, in input order,
 *
 *     group      INDEX                         0-based position of the group in the input
 *     nanos      N                             how long the assignor took (building the Cluster included)
 *     member     ID  ASSIGNED                  one line per member, in input order; ASSIGNED comma-separated
 *                                              TOPIC:NUMBER pairs in the order the assignor listed them
 *     error      MESSAGE                       instead of the member lines when the assignor threw
 *     end
 *
 * Each rack becomes one broker, and each partition's replicas are the brokers of its racks, so the
 * replica racks reach the rack-aware code paths exactly as a real Cluster would deliver them.
 * Members reach the assignor in input order; the sticky assignors also get the user data a real
 * member would send after having been assigned OWNED in GENERATION (eager members send no owned
 * partitions, as they revoke everything before joining).
 */

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class AssignorHarness {

    private static final String ABSENT = "!";
    private static final String GROUP_ID = "lagassign-harness";

    private record PartitionLine(String topic, int number, List<String> racks) { }

    private record MemberLine(String id, Optional<String> instanceId, Optional<String> rack,
                              Optional<Integer> generation, List<String> topics,
                              List<TopicPartition> owned) { }

    private static final class GroupInput {
        final String strategy;
        final List<PartitionLine> partitions = new ArrayList<>();
        final List<MemberLine> members = new ArrayList<>();

        GroupInput(String strategy) {
            this.strategy = strategy;
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        GroupInput group = null;
        int index = 0;
        String line;
        int lineNumber = 0;
        while ((line = in.readLine()) != null) {
            lineNumber++;
            if (line.isEmpty())
                continue;
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "group" -> group = new GroupInput(f[1]);
                case "partition" -> requireGroup(group, lineNumber).partitions.add(
                        new PartitionLine(text(f[1]), Integer.parseInt(f[2]), texts(f[3])));
                case "member" -> requireGroup(group, lineNumber).members.add(new MemberLine(
                        text(f[1]), optional(f[2]), optional(f[3]),
                        ABSENT.equals(f[4]) ? Optional.empty() : Optional.of(Integer.parseInt(f[4])),
                        texts(f[5]), topicPartitions(f[6])));
                case "end" -> {
                    write(out, index++, requireGroup(group, lineNumber));
                    group = null;
                }
                default -> throw new IllegalArgumentException("line " + lineNumber + ": unknown record " + f[0]);
            }
        }
        out.flush();
    }

    private static GroupInput requireGroup(GroupInput group, int lineNumber) {
        if (group == null)
            throw new IllegalArgumentException("line " + lineNumber + ": record outside a group");
        return group;
    }

    private static void write(PrintWriter out, int index, GroupInput group) {
        out.println("group\t" + index);
        try {
            long started = System.nanoTime();
            Map<String, Assignment> assigned = assign(group).groupAssignment();
            out.println("nanos\t" + (System.nanoTime() - started));
            for (MemberLine m : group.members) {
                Assignment a = assigned.get(m.id());
                List<TopicPartition> partitions = a == null ? Collections.emptyList() : a.partitions();
                out.println("member\t" + encode(m.id()) + "\t" + encodePartitions(partitions));
            }
        } catch (RuntimeException e) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            out.println("error\t" + encode(trace.toString()));
        }
        out.println("end");
    }

    private static GroupAssignment assign(GroupInput group) {
        ConsumerPartitionAssignor assignor = assignor(group.strategy);
        Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        for (MemberLine m : group.members)
            subscriptions.put(m.id(), subscription(group.strategy, m));
        return assignor.assign(cluster(group.partitions), new GroupSubscription(subscriptions));
    }

    private static ConsumerPartitionAssignor assignor(String strategy) {
        return switch (strategy) {
            case "range" -> new RangeAssignor();
            case "roundrobin" -> new RoundRobinAssignor();
            case "sticky" -> new StickyAssignor();
            case "cooperative-sticky" -> new CooperativeStickyAssignor();
            default -> throw new IllegalArgumentException("unknown strategy " + strategy);
        };
    }

    private static Subscription subscription(String strategy, MemberLine m) {
        // Only the sticky assignors keep user data; the range and round-robin members send none.
        ByteBuffer userData = null;
        List<TopicPartition> owned = m.owned();
        if (strategy.equals("sticky") || strategy.equals("cooperative-sticky"))
            userData = previousGenerationUserData(strategy, m);
        if (strategy.equals("sticky"))
            owned = Collections.emptyList();
        Subscription s = new Subscription(m.topics(), userData, owned, m.generation().orElse(-1), m.rack());
        s.setGroupInstanceId(m.instanceId());
        return s;
    }

    // What the member's own assignor would put into its subscription after it was handed its
    // owned partitions in its generation: the eager StickyAssignor learns its previous assignment
    // only from here. The metadata constructor is deprecated for applications, not for this use.
    @SuppressWarnings("removal")
    private static ByteBuffer previousGenerationUserData(String strategy, MemberLine m) {
        if (m.generation().isEmpty() && m.owned().isEmpty())
            return null;
        ConsumerPartitionAssignor own = assignor(strategy);
        own.onAssignment(new Assignment(m.owned()),
                new ConsumerGroupMetadata(GROUP_ID, m.generation().orElse(-1), m.id(), m.instanceId()));
        return own.subscriptionUserData(new HashSet<>(m.topics()));
    }

    private static Cluster cluster(List<PartitionLine> partitions) {
        TreeSet<String> racks = new TreeSet<>();
        partitions.forEach(p -> racks.addAll(p.racks()));
        Map<String, Node> brokerOnRack = new LinkedHashMap<>();
        for (String rack : racks)
            brokerOnRack.put(rack, new Node(brokerOnRack.size(), "broker-" + brokerOnRack.size(), 9092, rack));

        List<PartitionInfo> infos = new ArrayList<>();
        for (PartitionLine p : partitions) {
            Node[] replicas = p.racks().stream().sorted().map(brokerOnRack::get).toArray(Node[]::new);
            Node leader = replicas.length == 0 ? null : replicas[0];
            infos.add(new PartitionInfo(p.topic(), p.number(), leader, replicas, replicas));
        }
        return new Cluster("lagassign", brokerOnRack.values(), infos, Collections.emptySet(), Collections.emptySet());
    }

    private static String text(String field) {
        return URLDecoder.decode(field, StandardCharsets.UTF_8);
    }

    private static Optional<String> optional(String field) {
        return ABSENT.equals(field) ? Optional.empty() : Optional.of(text(field));
    }

    private static List<String> texts(String field) {
        List<String> values = new ArrayList<>();
        if (!field.isEmpty())
            for (String item : field.split(",", -1))
                values.add(text(item));
        return values;
    }

    private static List<TopicPartition> topicPartitions(String field) {
        List<TopicPartition> values = new ArrayList<>();
        if (!field.isEmpty())
            for (String item : field.split(",", -1)) {
                int colon = item.lastIndexOf(':');
                values.add(new TopicPartition(text(item.substring(0, colon)), Integer.parseInt(item.substring(colon + 1))));
            }
        return values;
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static String encodePartitions(List<TopicPartition> partitions) {
        List<String> items = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions)
            items.add(encode(tp.topic()) + ":" + tp.partition());
        return String.join(",", items);
    }
}
