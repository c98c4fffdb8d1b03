// Kafka's own Java Admin doing the reads of lagassign's OffsetsReader.offsets(), timed warm in
// one JVM for bench/offsets.py: per request line "GROUP TOPIC[,TOPIC...]" on stdin, one
// describeTopics, then listOffsets(earliest), listOffsets(latest) and
// listConsumerGroupOffsets, all three in flight together; it prints
// "NANOS PARTITIONS SUM" (SUM: of every log start, log end and committed offset, to check that
// every client read the same). Run: java -cp '.cache/java-reference/lib/*' OffsetsRead.java HOST:PORT
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

public final class OffsetsRead {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "offsets-bench-java");
    // the Python contenders' deadline (bench/offsets.py READ_TIMEOUT_S): at 50,000 partitions on
    // a loaded machine a broker answered a ListOffsets after the default 30 s
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "120000");
    try (Admin admin = Admin.create(props);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] parts = line.trim().split(" ");
        String group = parts[0];
        List<String> topics = Arrays.asList(parts[1].split(","));
        long started = System.nanoTime();
        Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get();
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        List<TopicPartition> all = new ArrayList<>();
        for (TopicDescription d : described.values()) {
          for (TopicPartitionInfo p : d.partitions()) {
            TopicPartition tp = new TopicPartition(d.name(), p.partition());
            all.add(tp);
            earliest.put(tp, OffsetSpec.earliest());
            latest.put(tp, OffsetSpec.latest());
          }
        }
        KafkaFuture<Map<TopicPartition, ListOffsetsResultInfo>> begin = admin.listOffsets(earliest).all();
        KafkaFuture<Map<TopicPartition, ListOffsetsResultInfo>> end = admin.listOffsets(latest).all();
        KafkaFuture<Map<TopicPartition, OffsetAndMetadata>> committed =
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata();
        Map<TopicPartition, ListOffsetsResultInfo> b = begin.get();
        Map<TopicPartition, ListOffsetsResultInfo> e = end.get();
        Map<TopicPartition, OffsetAndMetadata> c = committed.get();
        long nanos = System.nanoTime() - started;
        long sum = 0;
        for (TopicPartition tp : all) {
          sum += b.get(tp).offset() + e.get(tp).offset();
          OffsetAndMetadata o = c.get(tp);
          if (o != null) sum += o.offset();
        }
        System.out.println(nanos + " " + all.size() + " " + sum);
        System.out.flush();
      }
    }
  }
}
