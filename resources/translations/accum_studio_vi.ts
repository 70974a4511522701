<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="vi_VN">
<context>
    <name>QObject</name>
    <message>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <source>%1 holds neither accum_config.json nor metrics.jsonl</source>
        <translation>%1 không chứa accum_config.json hay metrics.jsonl</translation>
    </message>
    <message>
        <source>no accum_config.json</source>
        <translation>không có accum_config.json</translation>
    </message>
    <message>
        <source>no accum_config.json, and config.json is the model's: the run's options are unknown</source>
        <translation>không có accum_config.json, và config.json là của mô hình: không rõ các tuỳ chọn của lần chạy</translation>
    </message>
    <message>
        <source>summary.json: %1</source>
        <translation>summary.json: %1</translation>
    </message>
    <message>
        <source>not a summary</source>
        <translation>không phải bản tóm tắt</translation>
    </message>
    <message>
        <source>%1 holds neither accum_config.json nor config.json: not a run directory, not deleted</source>
        <translation>%1 không có accum_config.json hay config.json: không phải thư mục lần chạy, không xoá</translation>
    </message>
    <message>
        <source>%1 could not be deleted completely</source>
        <translation>Không xoá hết được %1</translation>
    </message>
</context>
<context>
    <name>studio::AccumulationMeter</name>
    <message>
        <source>Window full (%1 / %2): update %3 applied, .grad zeroed</source>
        <translation>Cửa sổ đầy (%1 / %2): đã áp dụng cập nhật %3, .grad được xóa</translation>
    </message>
    <message>
        <source>Window: %1 / %2 micro-batches in .grad</source>
        <translation>Cửa sổ: %1 / %2 micro-batch trong .grad</translation>
    </message>
    <message>
        <source>bars: ‖.grad‖ after each backward (it adds up)</source>
        <translation>cột: ‖.grad‖ sau mỗi backward (cộng dồn)</translation>
    </message>
</context>
<context>
    <name>studio::Chapter</name>
    <message>
        <source>K = %1 micro-batches make one update: the effective batch is the micro-batch × %1.</source>
        <translation>K = %1 micro-batch tạo một lần cập nhật: batch hiệu dụng là micro-batch × %1.</translation>
    </message>
    <message>
        <source>The loop takes one micro-batch at a time: small enough to fit in memory.</source>
        <translation>Vòng lặp lấy từng micro-batch một: đủ nhỏ để vừa bộ nhớ.</translation>
    </message>
    <message>
        <source>With %2 processes: only the micro-batch that ends the window needs the gradients averaged across them.</source>
        <translation>Với %2 tiến trình: chỉ micro-batch kết thúc cửa sổ mới cần lấy trung bình gradient giữa chúng.</translation>
    </message>
    <message>
        <source>no_sync(): the other micro-batches keep their gradients local, so the processes communicate once per update, not %1 times.</source>
        <translation>no_sync(): các micro-batch khác giữ gradient tại chỗ, nên các tiến trình chỉ trao đổi một lần mỗi lần cập nhật, không phải %1 lần.</translation>
    </message>
    <message>
        <source>autocast: the forward&apos;s matrix products run in lower precision; the weights and .grad stay float32.</source>
        <translation>autocast: các phép nhân ma trận của forward chạy ở độ chính xác thấp hơn; trọng số và .grad vẫn là float32.</translation>
    </message>
    <message>
        <source>Forward: the model computes this micro-batch&apos;s outputs and loss.</source>
        <translation>Forward: mô hình tính đầu ra và loss của micro-batch này.</translation>
    </message>
    <message>
        <source>The loss is the mean over this micro-batch&apos;s samples only.</source>
        <translation>Loss là trung bình chỉ trên các mẫu của micro-batch này.</translation>
    </message>
    <message>
        <source>Divided by K: the %1 micro-batch means add up to the mean over the whole effective batch.</source>
        <translation>Chia cho K: tổng %1 trung bình của các micro-batch bằng trung bình trên toàn bộ batch hiệu dụng.</translation>
    </message>
    <message>
        <source>With a loss scaler, backward runs on loss × S, so that small gradients survive; the gradients add up in .grad.</source>
        <translation>Với bộ scale loss, backward chạy trên loss × S để các gradient nhỏ không mất đi; gradient cộng dồn vào .grad.</translation>
    </message>
    <message>
        <source>backward() adds this micro-batch&apos;s gradient into .grad: it accumulates, it is not replaced.</source>
        <translation>backward() cộng gradient của micro-batch này vào .grad: nó tích lũy, không bị thay thế.</translation>
    </message>
    <message>
        <source>Every K-th micro-batch, or the last one of the data (a shorter window), ends the window: now the update.</source>
        <translation>Cứ mỗi micro-batch thứ K, hoặc micro-batch cuối của dữ liệu (cửa sổ ngắn hơn), kết thúc cửa sổ: giờ là lúc cập nhật.</translation>
    </message>
    <message>
        <source>unscale_(): .grad is divided by S once per window, and checked for inf or NaN.</source>
        <translation>unscale_(): .grad được chia cho S một lần mỗi cửa sổ và được kiểm tra inf hoặc NaN.</translation>
    </message>
    <message>
        <source>Clipping looks at the whole window&apos;s gradient, once per update, just before the step.</source>
        <translation>Clipping xét gradient của cả cửa sổ, một lần mỗi lần cập nhật, ngay trước bước tối ưu.</translation>
    </message>
    <message>
        <source>scaler.step(): one update with the window&apos;s gradient, skipped if a gradient was inf or NaN.</source>
        <translation>scaler.step(): một lần cập nhật với gradient của cửa sổ, bị bỏ qua nếu có gradient inf hoặc NaN.</translation>
    </message>
    <message>
        <source>optimizer.step(): one update with the gradient of the whole effective batch.</source>
        <translation>optimizer.step(): một lần cập nhật với gradient của toàn bộ batch hiệu dụng.</translation>
    </message>
    <message>
        <source>scaler.update(): once per window, S halves after an overflow and grows after a run of good windows.</source>
        <translation>scaler.update(): một lần mỗi cửa sổ, S giảm một nửa sau khi tràn số và tăng lên sau một chuỗi cửa sổ tốt.</translation>
    </message>
    <message>
        <source>The schedule steps once per update, not per micro-batch: it counts updates.</source>
        <translation>Lịch learning rate bước một lần mỗi lần cập nhật, không phải mỗi micro-batch: nó đếm số lần cập nhật.</translation>
    </message>
    <message>
        <source>zero_grad() empties .grad for the next window; without it, windows would add up.</source>
        <translation>zero_grad() làm trống .grad cho cửa sổ tiếp theo; không có nó, các cửa sổ sẽ cộng dồn vào nhau.</translation>
    </message>
    <message>
        <source>Accelerator(gradient_accumulation_steps=%1): Accelerate counts the micro-batches for you.</source>
        <translation>Accelerator(gradient_accumulation_steps=%1): Accelerate đếm các micro-batch thay bạn.</translation>
    </message>
    <message>
        <source>mixed_precision: the prepared model&apos;s forward runs under autocast.</source>
        <translation>mixed_precision: forward của mô hình đã prepare chạy dưới autocast.</translation>
    </message>
    <message>
        <source>prepare() wraps the model, optimizer, data and schedule (with several processes: DDP and a sharded data loader).</source>
        <translation>prepare() bọc mô hình, optimizer, dữ liệu và lịch learning rate (với nhiều tiến trình: DDP và data loader chia phần).</translation>
    </message>
    <message>
        <source>accumulate() knows whether this micro-batch ends the window; until it does, it enters no_sync() and the %2 processes do not communicate.</source>
        <translation>accumulate() biết micro-batch này có kết thúc cửa sổ hay không; cho đến lúc đó, nó vào no_sync() và %2 tiến trình không trao đổi.</translation>
    </message>
    <message>
        <source>accumulate() knows whether this micro-batch ends the window, and tells the optimizer and the scheduler.</source>
        <translation>accumulate() biết micro-batch này có kết thúc cửa sổ hay không, và báo cho optimizer và scheduler.</translation>
    </message>
    <message>
        <source>accelerator.backward() divides the loss by K and runs backward: the gradients add up in .grad.</source>
        <translation>accelerator.backward() chia loss cho K rồi chạy backward: gradient cộng dồn vào .grad.</translation>
    </message>
    <message>
        <source>Clipping only when the window ends, on the whole window&apos;s gradient.</source>
        <translation>Chỉ clipping khi cửa sổ kết thúc, trên gradient của cả cửa sổ.</translation>
    </message>
    <message>
        <source>optimizer.step() is called for every micro-batch, but the prepared optimizer steps only when the window ends.</source>
        <translation>optimizer.step() được gọi cho mọi micro-batch, nhưng optimizer đã prepare chỉ bước khi cửa sổ kết thúc.</translation>
    </message>
    <message>
        <source>The prepared scheduler steps with the optimizer: once per update.</source>
        <translation>Scheduler đã prepare bước cùng optimizer: một lần mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>zero_grad() also waits for the window&apos;s end, so .grad accumulates until then.</source>
        <translation>zero_grad() cũng chờ cửa sổ kết thúc, nên .grad tích lũy cho đến lúc đó.</translation>
    </message>
    <message>
        <source>With the Trainer the loop is configured, not written.</source>
        <translation>Với Trainer, vòng lặp được cấu hình chứ không phải viết ra.</translation>
    </message>
    <message>
        <source>gradient_accumulation_steps=%1: the Trainer runs %1 micro-batches per update.</source>
        <translation>gradient_accumulation_steps=%1: Trainer chạy %1 micro-batch mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>Mixed precision: the forward runs under autocast.</source>
        <translation>Độ chính xác hỗn hợp: forward chạy dưới autocast.</translation>
    </message>
    <message>
        <source>Clipping, once per update, on the whole window&apos;s gradient.</source>
        <translation>Clipping, một lần mỗi lần cập nhật, trên gradient của cả cửa sổ.</translation>
    </message>
    <message>
        <source>The Trainer gets the model, the arguments and the data.</source>
        <translation>Trainer nhận mô hình, các tham số và dữ liệu.</translation>
    </message>
    <message>
        <source>train() runs the whole loop; folded underneath, what it does for each update.</source>
        <translation>train() chạy toàn bộ vòng lặp; thu gọn bên dưới là những gì nó làm cho mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>Inside train(): each update takes a window of %1 micro-batches from the data loader.</source>
        <translation>Bên trong train(): mỗi lần cập nhật lấy một cửa sổ %1 micro-batch từ data loader.</translation>
    </message>
    <message>
        <source>no_sync() on every micro-batch but the window&apos;s last: the %2 processes communicate once per update.</source>
        <translation>no_sync() trên mọi micro-batch trừ micro-batch cuối của cửa sổ: %2 tiến trình trao đổi một lần mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>The Trainer divides by the window&apos;s real size: K, or fewer in a last, shorter window.</source>
        <translation>Trainer chia cho kích thước thật của cửa sổ: K, hoặc ít hơn ở cửa sổ cuối ngắn hơn.</translation>
    </message>
    <message>
        <source>After the window&apos;s last micro-batch: one optimizer step, one scheduler step, .grad zeroed.</source>
        <translation>Sau micro-batch cuối của cửa sổ: một bước optimizer, một bước scheduler, .grad về không.</translation>
    </message>
</context>
<context>
    <name>studio::CodePanel</name>
    <message>
        <source>C++</source>
        <translation>C++</translation>
    </message>
    <message>
        <source>The loop the engine runs, in C++</source>
        <translation>Vòng lặp mà engine chạy, bằng C++</translation>
    </message>
    <message>
        <source>Build up: reveal the chapter&apos;s loop a line at a time, each with why</source>
        <translation>Dựng dần: hiện vòng lặp của chương từng dòng một, mỗi dòng kèm lý do</translation>
    </message>
    <message>
        <source>Previous line: hide the last line shown (Alt+Up)</source>
        <translation>Dòng trước: ẩn dòng vừa hiện (Alt+Up)</translation>
    </message>
    <message>
        <source>Next line: show the loop&apos;s next line and why it is there (Alt+Down)</source>
        <translation>Dòng tiếp: hiện dòng tiếp theo của vòng lặp và lý do nó ở đó (Alt+Down)</translation>
    </message>
    <message>
        <source>Chapter</source>
        <translation>Chương</translation>
    </message>
    <message>
        <source>The loop as the chapter writes it; shaded lines are added by this configuration</source>
        <translation>Vòng lặp như chương sách viết; các dòng tô màu do cấu hình này thêm vào</translation>
    </message>
    <message>
        <source>A script that runs with the real library</source>
        <translation>Một script chạy với thư viện thật</translation>
    </message>
    <message>
        <source>Build up</source>
        <translation>Dựng dần</translation>
    </message>
    <message>
        <source>Previous line</source>
        <translation>Dòng trước</translation>
    </message>
    <message>
        <source>Next line</source>
        <translation>Dòng tiếp</translation>
    </message>
    <message>
        <source>Line %1 of %2: %3</source>
        <translation>Dòng %1 / %2: %3</translation>
    </message>
    <message>
        <source>Accelerator — the loop</source>
        <translation>Accelerator — vòng lặp</translation>
    </message>
    <message>
        <source>Trainer — the loop inside train()</source>
        <translation>Trainer — vòng lặp bên trong train()</translation>
    </message>
    <message>
        <source>PyTorch loop — the loop</source>
        <translation>Vòng lặp PyTorch — vòng lặp</translation>
    </message>
    <message>
        <source>forward: the model computes this micro-batch&apos;s loss</source>
        <translation>forward: mô hình tính loss của micro-batch này</translation>
    </message>
    <message>
        <source>loss / K: each micro-batch counts for 1/K of the update</source>
        <translation>loss / K: mỗi micro-batch đóng góp 1/K của lần cập nhật</translation>
    </message>
    <message>
        <source>backward: gradients are added into .grad (not replaced)</source>
        <translation>backward: gradient được cộng vào .grad (không bị ghi đè)</translation>
    </message>
    <message>
        <source>optimizer.step(): one update with the gradient of the whole window</source>
        <translation>optimizer.step(): một lần cập nhật với gradient của cả cửa sổ</translation>
    </message>
    <message>
        <source>lr_scheduler.step(): the schedule advances once per update</source>
        <translation>lr_scheduler.step(): lịch học tiến một bước mỗi lần cập nhật</translation>
    </message>
    <message>
        <source>zero_grad(): .grad is emptied for the next window</source>
        <translation>zero_grad(): .grad được xóa cho cửa sổ tiếp theo</translation>
    </message>
    <message>
        <source>Python</source>
        <translation>Python</translation>
    </message>
    <message>
        <source>Set a teaching pace (e.g. 800 ms) and press Run: the executing lines light up.</source>
        <translation>Đặt nhịp giảng dạy (ví dụ 800 ms) rồi bấm Chạy: các dòng đang thực thi sẽ sáng lên.</translation>
    </message>
    <message>
        <source>Step one micro-batch</source>
        <translation>Chạy một micro-batch</translation>
    </message>
    <message>
        <source>While paused: run exactly one more micro-batch, then pause again</source>
        <translation>Khi tạm dừng: chạy đúng một micro-batch nữa rồi dừng lại</translation>
    </message>
    <message>
        <source>Running at teaching pace: %1 ms per micro-batch.</source>
        <translation>Đang chạy theo nhịp giảng dạy: %1 ms mỗi micro-batch.</translation>
    </message>
    <message>
        <source>Running at full speed: the lines of the latest micro-batch are shown.</source>
        <translation>Đang chạy hết tốc độ: hiển thị các dòng của micro-batch mới nhất.</translation>
    </message>
    <message>
        <source>Micro-batch %1 (%2 of %3 in this window): %4</source>
        <translation>Micro-batch %1 (%2 trên %3 trong cửa sổ này): %4</translation>
    </message>
    <message>
        <source>autocast: inside this scope matrix products run in lower precision (bf16/fp16); the weights stay fp32</source>
        <translation>autocast: trong phạm vi này các phép nhân ma trận chạy ở độ chính xác thấp hơn (bf16/fp16); trọng số vẫn là fp32</translation>
    </message>
    <message>
        <source>scaler.scale(loss).backward(): the gradients of loss × S (S = %1) are added into .grad; S is the same for the whole window</source>
        <translation>scaler.scale(loss).backward(): gradient của loss × S (S = %1) được cộng vào .grad; S giữ nguyên trong cả cửa sổ</translation>
    </message>
    <message>
        <source>scaler.unscale_(optimizer): .grad is divided by S once, before clipping, and checked for inf/NaN</source>
        <translation>scaler.unscale_(optimizer): .grad được chia cho S một lần, trước khi cắt gradient, và được kiểm tra inf/NaN</translation>
    </message>
    <message>
        <source>scaler.step(optimizer): one update with the window&apos;s gradient, skipped if a gradient was inf/NaN (overflow)</source>
        <translation>scaler.step(optimizer): một lần cập nhật với gradient của cửa sổ, bị bỏ qua nếu có gradient là inf/NaN (tràn số)</translation>
    </message>
    <message>
        <source>scaler.update(): once per window; S halves after an overflow and doubles after 2000 good windows</source>
        <translation>scaler.update(): một lần mỗi cửa sổ; S giảm một nửa sau khi tràn số và tăng gấp đôi sau 2000 cửa sổ tốt</translation>
    </message>
    <message>
        <source>no_sync(): this backward keeps its gradients local — no communication between the %1 processes</source>
        <translation>no_sync(): lần backward này giữ gradient tại chỗ — không trao đổi gì giữa %1 tiến trình</translation>
    </message>
    <message>
        <source>all-reduce: the window&apos;s gradients are averaged across the %1 processes, once per update</source>
        <translation>all-reduce: gradient của cả cửa sổ được lấy trung bình giữa %1 tiến trình, một lần mỗi cập nhật</translation>
    </message>
    <message>
        <source>Gradient all-reduces since the last optimizer step: 1 with no_sync, K when every micro-batch syncs</source>
        <translation>Số lần all-reduce gradient kể từ bước optimizer trước: 1 với no_sync, K khi micro-batch nào cũng đồng bộ</translation>
    </message>
    <message>
        <source>All-reduces this update: %1 (%2 processes)</source>
        <translation>All-reduce trong lần cập nhật này: %1 (%2 tiến trình)</translation>
    </message>
    <message>
        <source>step = load_package(&quot;%1&quot;, &quot;train&quot;)   # your compiled step: loss, logits and gradients from one call, added up by the loop below</source>
        <translation>step = load_package(&quot;%1&quot;, &quot;train&quot;)   # bước đã biên dịch của bạn: loss, logits và gradient từ một lần gọi, được vòng lặp bên dưới cộng dồn</translation>
    </message>
    <message>
        <source>model = torch.jit.load(&quot;%1&quot;)   # your module: the loop below trains it as it trains the built-in ones</source>
        <translation>model = torch.jit.load(&quot;%1&quot;)   # mô hình của bạn: vòng lặp bên dưới huấn luyện nó như các mô hình có sẵn</translation>
    </message>
</context>
<context>
    <name>studio::ConfigPanel</name>
    <message>
        <source>PyTorch loop</source>
        <translation>Vòng lặp PyTorch</translation>
    </message>
    <message>
        <source>Accelerator</source>
        <translation>Accelerator</translation>
    </message>
    <message>
        <source>Trainer</source>
        <translation>Trainer</translation>
    </message>
    <message>
        <source>The API style: the explicit PyTorch loop, Hugging Face Accelerate, or the Transformers Trainer</source>
        <translation>Kiểu API: vòng lặp PyTorch tường minh, Hugging Face Accelerate hoặc Trainer của Transformers</translation>
    </message>
    <message>
        <source>default location</source>
        <translation>vị trí mặc định</translation>
    </message>
    <message>
        <source>Micro-batch size B: samples per forward/backward pass. Memory grows with B.</source>
        <translation>Kích thước micro-batch B: số mẫu mỗi lượt forward/backward. Bộ nhớ tăng theo B.</translation>
    </message>
    <message>
        <source>K: micro-batches whose gradients add up in .grad before one optimizer step</source>
        <translation>K: số micro-batch cộng dồn gradient trong .grad trước một bước optimizer</translation>
    </message>
    <message>
        <source>unset</source>
        <translation>chưa đặt</translation>
    </message>
    <message>
        <source>Optimizer steps; 0 = decided by the epochs</source>
        <translation>Số bước optimizer; 0 = do số epoch quyết định</translation>
    </message>
    <message>
        <source>tokens: divide by the token count of the whole window (num_items_in_batch)</source>
        <translation>tokens: chia cho số token của cả cửa sổ (num_items_in_batch)</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Tự động</translation>
    </message>
    <message>
        <source>Unavailable: %1</source>
        <translation>Không dùng được: %1</translation>
    </message>
    <message>
        <source>Tensor memory the run may use, e.g. 40MiB or 2GiB; 0 = no limit. Going over it ends the run with out-of-memory.</source>
        <translation>Bộ nhớ tensor được phép dùng, ví dụ 40MiB hoặc 2GiB; 0 = không giới hạn. Vượt quá thì lần chạy kết thúc vì hết bộ nhớ.</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <source>full speed</source>
        <translation>hết tốc độ</translation>
    </message>
    <message>
        <source>Teaching pace: pause after every micro-batch so a class can follow</source>
        <translation>Nhịp giảng dạy: nghỉ sau mỗi micro-batch để cả lớp theo kịp</translation>
    </message>
    <message>
        <source>none (nothing written)</source>
        <translation>không có (không ghi gì)</translation>
    </message>
    <message>
        <source>Choose a directory for metrics and checkpoints</source>
        <translation>Chọn thư mục cho số liệu và checkpoint</translation>
    </message>
    <message>
        <source>Experiment</source>
        <translation>Thí nghiệm</translation>
    </message>
    <message>
        <source>Style</source>
        <translation>Kiểu</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>Tập dữ liệu</translation>
    </message>
    <message>
        <source>Data path</source>
        <translation>Đường dẫn dữ liệu</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Mô hình</translation>
    </message>
    <message>
        <source>Batching</source>
        <translation>Chia lô</translation>
    </message>
    <message>
        <source>Micro-batch (B)</source>
        <translation>Micro-batch (B)</translation>
    </message>
    <message>
        <source>Accumulation (K)</source>
        <translation>Tích lũy (K)</translation>
    </message>
    <message>
        <source>Effective batch</source>
        <translation>Batch hiệu dụng</translation>
    </message>
    <message>
        <source>Optimisation</source>
        <translation>Tối ưu hóa</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Tốc độ học</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>Optimizer</translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation>Momentum</translation>
    </message>
    <message>
        <source>Scheduler</source>
        <translation>Scheduler</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>Số epoch</translation>
    </message>
    <message>
        <source>Max steps</source>
        <translation>Số bước tối đa</translation>
    </message>
    <message>
        <source>Loss normalisation</source>
        <translation>Chuẩn hóa loss</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>Môi trường</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Thiết bị</translation>
    </message>
    <message>
        <source>Memory budget</source>
        <translation>Ngân sách bộ nhớ</translation>
    </message>
    <message>
        <source>Pace</source>
        <translation>Nhịp</translation>
    </message>
    <message>
        <source>%1 × %2 = %3 samples / update</source>
        <translation>%1 × %2 = %3 mẫu / cập nhật</translation>
    </message>
    <message>
        <source>Each run gets a new folder in here, named after the time it started, with its accum_config.json, metrics.jsonl, summary.json and checkpoints</source>
        <translation>Mỗi lần chạy có một thư mục mới ở đây, đặt tên theo thời điểm bắt đầu, chứa accum_config.json, metrics.jsonl, summary.json và các checkpoint</translation>
    </message>
    <message>
        <source>Save runs in</source>
        <translation>Lưu các lần chạy vào</translation>
    </message>
    <message>
        <source>Report to TensorBoard</source>
        <translation>Ghi cho TensorBoard</translation>
    </message>
    <message>
        <source>Also write TensorBoard event files, with the Trainer&apos;s tags, into each run&apos;s folder under runs/ (the Trainer&apos;s report_to; needs a folder to save runs in)</source>
        <translation>Ghi thêm các tệp sự kiện TensorBoard, với các thẻ của Trainer, vào thư mục của mỗi lần chạy, trong runs/ (report_to của Trainer; cần một thư mục để lưu các lần chạy)</translation>
    </message>
    <message>
        <source>Folder for runs</source>
        <translation>Thư mục cho các lần chạy</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <source>micro-batch %1 × K %2 = %3</source>
        <translation>micro-batch %1 × K %2 = %3</translation>
    </message>
    <message>
        <source>%1 lr %2</source>
        <translation>%1 lr %2</translation>
    </message>
    <message>
        <source>%1 schedule</source>
        <translation>lịch %1</translation>
    </message>
    <message>
        <source>loss per token</source>
        <translation>loss theo token</translation>
    </message>
    <message>
        <source>budget %1</source>
        <translation>ngân sách %1</translation>
    </message>
    <message>
        <source>fp32</source>
        <translation>fp32</translation>
    </message>
    <message>
        <source>bf16 (autocast)</source>
        <translation>bf16 (autocast)</translation>
    </message>
    <message>
        <source>fp16 (autocast, CUDA)</source>
        <translation>fp16 (autocast, CUDA)</translation>
    </message>
    <message>
        <source>Mixed precision: the forward and the loss under autocast in bf16 or fp16; the weights, their gradients and the optimizer stay fp32. fp16 needs CUDA and brings a loss scaler.</source>
        <translation>Độ chính xác hỗn hợp: forward và loss chạy dưới autocast ở bf16 hoặc fp16; trọng số, gradient của chúng và optimizer vẫn là fp32. fp16 cần CUDA và đi kèm bộ co giãn loss.</translation>
    </message>
    <message>
        <source>Unavailable: fp16 needs CUDA; use bf16 on the CPU</source>
        <translation>Không dùng được: fp16 cần CUDA; hãy dùng bf16 trên CPU</translation>
    </message>
    <message>
        <source>none</source>
        <translation>không</translation>
    </message>
    <message>
        <source>dynamic (GradScaler)</source>
        <translation>động (GradScaler)</translation>
    </message>
    <message>
        <source>A dynamic loss scaler: each micro-batch&apos;s loss × S before backward; once per window the gradients are divided by S, a window with inf/NaN gradients is skipped and S halves. Always on with fp16.</source>
        <translation>Bộ co giãn loss động: loss của mỗi micro-batch được nhân với S trước backward; mỗi cửa sổ một lần, gradient được chia cho S, cửa sổ có gradient inf/NaN bị bỏ qua và S giảm một nửa. Luôn bật với fp16.</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Độ chính xác</translation>
    </message>
    <message>
        <source>Loss scaling</source>
        <translation>Co giãn loss</translation>
    </message>
    <message>
        <source>loss scaling</source>
        <translation>co giãn loss</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>Gradient checkpointing</translation>
    </message>
    <message>
        <source>Memory: estimating…</source>
        <translation>Bộ nhớ: đang ước tính…</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Bộ nhớ</translation>
    </message>
    <message>
        <source>checkpointing</source>
        <translation>checkpointing</translation>
    </message>
    <message>
        <source>Memory: no estimate until the settings are valid</source>
        <translation>Bộ nhớ: chưa ước tính được cho đến khi cấu hình hợp lệ</translation>
    </message>
    <message>
        <source>Memory: estimated when the run ends</source>
        <translation>Bộ nhớ: sẽ ước tính khi lần chạy kết thúc</translation>
    </message>
    <message>
        <source>Memory: no estimate (%1)</source>
        <translation>Bộ nhớ: không ước tính được (%1)</translation>
    </message>
    <message>
        <source>(of it frozen weights %1: no gradients, no optimizer state)</source>
        <translation>(trong đó trọng số đóng băng %1: không gradient, không trạng thái optimizer)</translation>
    </message>
    <message>
        <source>≈ %1 at peak: activations %2 (%3 per sample) + parameters, gradients and optimizer state %4</source>
        <translation>≈ %1 ở đỉnh: activation %2 (%3 mỗi mẫu) + tham số, gradient và trạng thái optimizer %4</translation>
    </message>
    <message>
        <source>— over the %1 budget</source>
        <translation>— vượt ngân sách %1</translation>
    </message>
    <message>
        <source>Data parallel: N processes on this machine, each with its own micro-batches of B; their gradients are averaged (all-reduce) once per update. The effective batch is B × K × N.</source>
        <translation>Song song dữ liệu: N tiến trình trên máy này, mỗi tiến trình có các micro-batch B riêng; gradient của chúng được lấy trung bình (all-reduce) một lần mỗi cập nhật. Batch hiệu dụng là B × K × N.</translation>
    </message>
    <message>
        <source>Keep fewer activations in the forward and recompute them in backward (or run a block in slices of the batch): less activation memory, some extra time</source>
        <translation>Giữ ít activation hơn trong forward và tính lại chúng trong backward (hoặc chạy một khối theo từng phần của batch): ít bộ nhớ activation hơn, tốn thêm chút thời gian</translation>
    </message>
    <message>
        <source>Processes (N)</source>
        <translation>Tiến trình (N)</translation>
    </message>
    <message>
        <source>micro-batch %1 × K %2 × %3 processes = %4</source>
        <translation>micro-batch %1 × K %2 × %3 tiến trình = %4</translation>
    </message>
    <message>
        <source>%1 × %2 × %3 processes = %4 samples / update</source>
        <translation>%1 × %2 × %3 tiến trình = %4 mẫu / cập nhật</translation>
    </message>
    <message>
        <source>from file…</source>
        <translation>từ tệp…</translation>
    </message>
    <message>
        <source>A built-in model, or your own: a TorchScript file made with torch.jit.script or torch.jit.trace, or a training step compiled into a .pt2 package by examples/accum_pt2.py (examples/ shows how)</source>
        <translation>Một mô hình có sẵn, hoặc mô hình của bạn: tệp TorchScript tạo bằng torch.jit.script hoặc torch.jit.trace, hoặc một bước huấn luyện được biên dịch thành gói .pt2 bằng examples/accum_pt2.py (xem examples/)</translation>
    </message>
    <message>
        <source>model.pt (TorchScript) or model.pt2 (compiled step)</source>
        <translation>model.pt (TorchScript) hoặc model.pt2 (bước huấn luyện đã biên dịch)</translation>
    </message>
    <message>
        <source>The TorchScript module to train. Its forward gets the batch&apos;s input_ids (or inputs), attention_mask and labels by argument name, and returns logits, a loss, or a Transformers model&apos;s (loss, logits). Or a .pt2 package of the whole training step (examples/accum_pt2.py, hf_to_accum.py --format pt2), which needs the LibTorch 2.x build.</source>
        <translation>Mô-đun TorchScript cần huấn luyện. Hàm forward nhận input_ids (hoặc inputs), attention_mask và labels của lô theo tên tham số, và trả về logits, một giá trị loss, hoặc (loss, logits) như mô hình Transformers. Hoặc một gói .pt2 chứa toàn bộ bước huấn luyện (examples/accum_pt2.py, hf_to_accum.py --format pt2), cần bản dựng LibTorch 2.x.</translation>
    </message>
    <message>
        <source>Choose a TorchScript file or a .pt2 package</source>
        <translation>Chọn tệp TorchScript hoặc gói .pt2</translation>
    </message>
    <message>
        <source>Choose the data: a folder for Fashion-MNIST, a file for csv and tensors</source>
        <translation>Chọn dữ liệu: một thư mục cho Fashion-MNIST, một tệp cho csv và tensors</translation>
    </message>
    <message>
        <source>Model file</source>
        <translation>Tệp mô hình</translation>
    </message>
    <message>
        <source>Your model</source>
        <translation>Mô hình của bạn</translation>
    </message>
    <message>
        <source>Your model (*.pt *.pth *.ts *.torchscript *.pt2);;TorchScript (*.pt *.pth *.ts *.torchscript);;Compiled training step (*.pt2);;All files (*)</source>
        <translation>Mô hình của bạn (*.pt *.pth *.ts *.torchscript *.pt2);;TorchScript (*.pt *.pth *.ts *.torchscript);;Bước huấn luyện đã biên dịch (*.pt2);;Mọi tệp (*)</translation>
    </message>
    <message>
        <source>Fashion-MNIST folder</source>
        <translation>Thư mục Fashion-MNIST</translation>
    </message>
    <message>
        <source>Data file</source>
        <translation>Tệp dữ liệu</translation>
    </message>
    <message>
        <source>CSV (*.csv);;All files (*)</source>
        <translation>CSV (*.csv);;Mọi tệp (*)</translation>
    </message>
    <message>
        <source>Tensors saved by torch.save (*.pt *.pth);;All files (*)</source>
        <translation>Tensor lưu bằng torch.save (*.pt *.pth);;Mọi tệp (*)</translation>
    </message>
    <message>
        <source>must be at least 1 sample per micro-batch (it is %1)</source>
        <translation>phải có ít nhất 1 mẫu mỗi micro-batch (đang là %1)</translation>
    </message>
    <message>
        <source>%1 is too large; at most 1000000</source>
        <translation>%1 quá lớn; tối đa 1000000</translation>
    </message>
    <message>
        <source>%1 is more than the %2 training samples of %3; at most %2</source>
        <translation>%1 nhiều hơn %2 mẫu huấn luyện của %3; tối đa %2</translation>
    </message>
    <message>
        <source>must be at least 1 (1 = no accumulation); it is %1</source>
        <translation>phải ít nhất là 1 (1 = không tích lũy); đang là %1</translation>
    </message>
    <message>
        <source>%1 is too large; at most 100000</source>
        <translation>%1 quá lớn; tối đa 100000</translation>
    </message>
    <message>
        <source>must be from 1 to 256 processes; it is %1</source>
        <translation>phải từ 1 đến 256 tiến trình; đang là %1</translation>
    </message>
    <message>
        <source>set %1 or %2: with both unset the run has no length</source>
        <translation>hãy đặt %1 hoặc %2: cả hai đều chưa đặt thì lần chạy không có độ dài</translation>
    </message>
    <message>
        <source>must be above 0</source>
        <translation>phải lớn hơn 0</translation>
    </message>
    <message>
        <source>%1 is too large; at most 100</source>
        <translation>%1 quá lớn; tối đa 100</translation>
    </message>
    <message>
        <source>cannot read “%1” as a size (examples: 40MiB, 2GiB, 0 for none)</source>
        <translation>không đọc được “%1” là một kích thước (ví dụ: 40MiB, 2GiB, 0 là không giới hạn)</translation>
    </message>
    <message>
        <source>fp16 needs a CUDA device; use bf16 on the CPU</source>
        <translation>fp16 cần thiết bị CUDA; hãy dùng bf16 trên CPU</translation>
    </message>
    <message>
        <source>%1 needs a model file (TorchScript .pt or a compiled .pt2 step): choose it under %2</source>
        <translation>%1 cần một tệp mô hình (TorchScript .pt hoặc bước .pt2 đã biên dịch): hãy chọn nó ở %2</translation>
    </message>
    <message>
        <source>But an epoch has only %1 micro-batches of %2: the epoch ends first, so each update takes the whole epoch, %3 samples.</source>
        <translation>Nhưng một epoch chỉ có %1 micro-batch cỡ %2: epoch kết thúc trước, nên mỗi cập nhật lấy cả epoch, %3 mẫu.</translation>
    </message>
    <message>
        <source>Save runs</source>
        <translation>Lưu các lần chạy</translation>
    </message>
    <message>
        <source>Untick to save nothing: runs are then not written to disk</source>
        <translation>Bỏ đánh dấu để không lưu gì: các lần chạy sẽ không được ghi ra đĩa</translation>
    </message>
    <message>
        <source>Noise scale</source>
        <translation>Thang nhiễu</translation>
    </message>
    <message>
        <source>It was measured on another model or data set: measure this one for a sound figure.</source>
        <translation>Con số này đo trên mô hình hoặc tập dữ liệu khác: hãy đo trên cấu hình này để có con số đáng tin.</translation>
    </message>
</context>
<context>
    <name>studio::EngineText</name>
    <message>
        <source>%1 × %2 with gradient checkpointing against %3 × %4 without it: no measurable difference in speed (%5 ×, measured).</source>
        <translation>%1 × %2 có gradient checkpointing so với %3 × %4 không có: không có khác biệt đo được về tốc độ (%5 ×, đã đo).</translation>
    </message>
    <message>
        <source>%1 × %2 without checkpointing against %3 × %4 with it: no measurable difference in speed (%5 ×, measured).</source>
        <translation>%1 × %2 không checkpointing so với %3 × %4 có checkpointing: không có khác biệt đo được về tốc độ (%5 ×, đã đo).</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Hoàn tất</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Đã dừng</translation>
    </message>
    <message>
        <source>Out of memory</source>
        <translation>Hết bộ nhớ</translation>
    </message>
    <message>
        <source>Diverged</source>
        <translation>Phân kỳ</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>Lỗi</translation>
    </message>
    <message>
        <source> (auto_find_batch_size chose micro-batch %1 × %2)</source>
        <translation> (auto_find_batch_size đã chọn micro-batch %1 × %2)</translation>
    </message>
    <message>
        <source>; checkpoint %1</source>
        <translation>; đã lưu checkpoint %1</translation>
    </message>
    <message>
        <source>; checkpoint (could not be written: %1)</source>
        <translation>; không ghi được checkpoint: %1</translation>
    </message>
    <message>
        <source>; last good checkpoint %1</source>
        <translation>; checkpoint tốt cuối cùng: %1</translation>
    </message>
    <message>
        <source>; the last good checkpoint could not be written: %1</source>
        <translation>; không ghi được checkpoint tốt cuối cùng: %1</translation>
    </message>
    <message>
        <source>&lt;b&gt;Out of memory&lt;/b&gt; at micro-batch %1 × %2 accumulation steps: it needed %3 more with %4 of the %5 budget in use.</source>
        <translation>&lt;b&gt;Hết bộ nhớ&lt;/b&gt; ở micro-batch %1 × %2 bước tích lũy: cần thêm %3 khi đã dùng %4 trong ngân sách %5.</translation>
    </message>
    <message>
        <source>Out of memory at micro-batch %1 × %2 accumulation steps: it needed %3 more with %4 of the %5 budget in use.</source>
        <translation>Hết bộ nhớ ở micro-batch %1 × %2 bước tích lũy: cần thêm %3 khi đã dùng %4 trong ngân sách %5.</translation>
    </message>
    <message>
        <source>none</source>
        <translation>không có</translation>
    </message>
    <message>
        <source>&lt;b&gt;Out of memory&lt;/b&gt; at micro-batch %1 × %2 accumulation steps (budget %3, peak reached %4).</source>
        <translation>&lt;b&gt;Hết bộ nhớ&lt;/b&gt; ở micro-batch %1 × %2 bước tích lũy (ngân sách %3, đỉnh đã đạt %4).</translation>
    </message>
    <message>
        <source>Out of memory at micro-batch %1 × %2 accumulation steps (budget %3, peak reached %4).</source>
        <translation>Hết bộ nhớ ở micro-batch %1 × %2 bước tích lũy (ngân sách %3, đỉnh đã đạt %4).</translation>
    </message>
    <message>
        <source>auto_find_batch_size found no micro-batch that fits (it reached zero).</source>
        <translation>auto_find_batch_size không tìm được micro-batch nào vừa (đã giảm đến 0).</translation>
    </message>
    <message>
        <source>completed %1 optimizer steps</source>
        <translation>đã xong %1 bước optimizer</translation>
    </message>
    <message>
        <source> (%1 skipped as non-finite by --skip-nonfinite)</source>
        <translation> (bỏ qua %1 bước có giá trị không hữu hạn, theo --skip-nonfinite)</translation>
    </message>
    <message>
        <source>stopped at optimizer step %1</source>
        <translation>đã dừng ở bước optimizer %1</translation>
    </message>
    <message>
        <source>stopped before the run started</source>
        <translation>đã dừng trước khi lần chạy bắt đầu</translation>
    </message>
    <message>
        <source>the gradient norm became non-finite at optimizer step %1 (loss %2, gradient norm %3); the weights were left at step %4. Lower --lr or set --max-grad-norm.</source>
        <translation>chuẩn gradient thành giá trị không hữu hạn ở bước optimizer %1 (loss %2, chuẩn gradient %3); trọng số được giữ ở bước %4. Hãy giảm --lr hoặc đặt --max-grad-norm.</translation>
    </message>
    <message>
        <source>the loss became non-finite at optimizer step %1 (loss %2, gradient norm %3); the weights were left at step %4. Lower --lr or set --max-grad-norm.</source>
        <translation>loss thành giá trị không hữu hạn ở bước optimizer %1 (loss %2, chuẩn gradient %3); trọng số được giữ ở bước %4. Hãy giảm --lr hoặc đặt --max-grad-norm.</translation>
    </message>
    <message>
        <source>internal error: %1</source>
        <translation>lỗi nội bộ: %1</translation>
    </message>
    <message>
        <source>Another run is already in progress in this program, which trains one run at a time. Wait for it to end or stop it, then start again.</source>
        <translation>Một lần chạy khác đang diễn ra trong chương trình này, vốn chỉ huấn luyện một lần chạy mỗi lúc. Hãy đợi nó kết thúc hoặc dừng nó, rồi bắt đầu lại.</translation>
    </message>
    <message>
        <source>The micro-batch is already 1: raise the memory budget or use a smaller model.</source>
        <translation>Micro-batch đã là 1: hãy tăng ngân sách bộ nhớ hoặc dùng mô hình nhỏ hơn.</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps: the same effective batch (%3) with about half the activation memory.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy: cùng batch hiệu dụng (%3), với khoảng một nửa bộ nhớ activation.</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps: effective batch %3, the nearest above, with about half the activation memory.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy: batch hiệu dụng %3, số gần nhất phía trên, với khoảng một nửa bộ nhớ activation.</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps: the same effective batch (%3), measured to fit: it peaked at %4 of the budget.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy: cùng batch hiệu dụng (%3), đã đo là vừa: đỉnh %4 trong ngân sách.</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps: effective batch %3, the nearest above, measured to fit: it peaked at %4 of the budget.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy: batch hiệu dụng %3, số gần nhất phía trên, đã đo là vừa: đỉnh %4 trong ngân sách.</translation>
    </message>
    <message>
        <source>Measured: %1.</source>
        <translation>Đã đo: %1.</translation>
    </message>
    <message>
        <source>even micro-batch 1 is predicted to need %1, more than %2 (the budget less the safety margin); raise the budget or use a smaller model</source>
        <translation>ngay cả micro-batch 1 cũng được dự đoán cần %1, nhiều hơn %2 (ngân sách trừ biên an toàn); hãy tăng ngân sách hoặc dùng mô hình nhỏ hơn</translation>
    </message>
    <message>
        <source>no micro-batch fits the budget; raise the budget or use a smaller model</source>
        <translation>không micro-batch nào vừa ngân sách; hãy tăng ngân sách hoặc dùng mô hình nhỏ hơn</translation>
    </message>
    <message>
        <source>invalid setting --%1: %2</source>
        <translation>thiết lập --%1 không hợp lệ: %2</translation>
    </message>
    <message>
        <source>the configuration cannot run: %1</source>
        <translation>cấu hình này không chạy được: %1</translation>
    </message>
    <message>
        <source>--device %1 was asked for, but this build&apos;s LibTorch has no CUDA; use --device cpu or auto</source>
        <translation>đã yêu cầu --device %1, nhưng LibTorch của bản dựng này không có CUDA; hãy dùng --device cpu hoặc auto</translation>
    </message>
    <message>
        <source>--device %1 was asked for, but no CUDA device is available; use --device cpu or auto</source>
        <translation>đã yêu cầu --device %1, nhưng không có thiết bị CUDA nào; hãy dùng --device cpu hoặc auto</translation>
    </message>
    <message>
        <source>--device %1 does not exist (%2 CUDA devices)</source>
        <translation>--device %1 không tồn tại (có %2 thiết bị CUDA)</translation>
    </message>
    <message>
        <source>the micro-batch (--batch-size %1) is larger than the %2 training samples of %3; use at most %2</source>
        <translation>micro-batch (--batch-size %1) lớn hơn %2 mẫu huấn luyện của %3; hãy dùng tối đa %2</translation>
    </message>
    <message>
        <source>the folder for runs cannot be used (--output-dir): %1</source>
        <translation>không dùng được thư mục cho các lần chạy (--output-dir): %1</translation>
    </message>
    <message>
        <source>no space left on device</source>
        <translation>ổ đĩa đã hết chỗ trống</translation>
    </message>
    <message>
        <source>disk quota exceeded</source>
        <translation>đã dùng hết hạn mức đĩa</translation>
    </message>
    <message>
        <source>input/output error</source>
        <translation>lỗi vào/ra</translation>
    </message>
    <message>
        <source>read-only file system</source>
        <translation>hệ thống tệp chỉ cho đọc</translation>
    </message>
    <message>
        <source>no such file or directory</source>
        <translation>không còn tệp hay thư mục đó</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>không có quyền</translation>
    </message>
    <message>
        <source>%1 while creating %2</source>
        <translation>%1 khi tạo %2</translation>
    </message>
    <message>
        <source>%1 while renaming %2 to %3</source>
        <translation>%1 khi đổi tên %2 thành %3</translation>
    </message>
    <message>
        <source>%1 while syncing %2</source>
        <translation>%1 khi lưu %2 xuống đĩa</translation>
    </message>
    <message>
        <source>%1 while removing %2</source>
        <translation>%1 khi xoá %2</translation>
    </message>
    <message>
        <source>%1 while writing %2</source>
        <translation>%1 khi ghi %2</translation>
    </message>
    <message>
        <source>the data cannot be used: %1</source>
        <translation>không dùng được dữ liệu: %1</translation>
    </message>
    <message>
        <source>the Fashion-MNIST directory %1 does not exist. Install Debian&apos;s package dataset-fashion-mnist, or choose a folder with the four *-idx?-ubyte.gz files as the data path.</source>
        <translation>thư mục Fashion-MNIST %1 không tồn tại. Hãy cài gói Debian dataset-fashion-mnist, hoặc chọn làm đường dẫn dữ liệu một thư mục có bốn tệp *-idx?-ubyte.gz.</translation>
    </message>
    <message>
        <source>the Fashion-MNIST file %1 is missing. Install Debian&apos;s package dataset-fashion-mnist, or choose a folder with the four *-idx?-ubyte.gz files as the data path.</source>
        <translation>thiếu tệp Fashion-MNIST %1. Hãy cài gói Debian dataset-fashion-mnist, hoặc chọn làm đường dẫn dữ liệu một thư mục có bốn tệp *-idx?-ubyte.gz.</translation>
    </message>
    <message>
        <source>cannot open %1 (%2)</source>
        <translation>không mở được %1 (%2)</translation>
    </message>
    <message>
        <source>%1 is not a gzip file (its first bytes are wrong)</source>
        <translation>%1 không phải tệp gzip (các byte đầu sai)</translation>
    </message>
    <message>
        <source>%1 is truncated (the data ends early); reinstall or download it again</source>
        <translation>%1 bị cụt (dữ liệu kết thúc sớm); hãy cài lại hoặc tải lại</translation>
    </message>
    <message>
        <source>the data file %1 cannot be used: %2</source>
        <translation>không dùng được tệp dữ liệu %1: %2</translation>
    </message>
    <message>
        <source>%1, line %2: %3</source>
        <translation>%1, dòng %2: %3</translation>
    </message>
    <message>
        <source>%1, line %2: expected %3 fields, found %4</source>
        <translation>%1, dòng %2: cần %3 trường nhưng có %4</translation>
    </message>
    <message>
        <source>%1, line %2: the value &apos;%4&apos; in column &apos;%3&apos; is not a number</source>
        <translation>%1, dòng %2: giá trị &apos;%4&apos; ở cột &apos;%3&apos; không phải là số</translation>
    </message>
    <message>
        <source>%1, line %2: no label column &apos;%3&apos; in the header (columns: %4); choose one as the label column</source>
        <translation>%1, dòng %2: dòng tiêu đề không có cột nhãn &apos;%3&apos; (các cột: %4); hãy chọn một cột làm cột nhãn</translation>
    </message>
    <message>
        <source>micro-batch %1 × %2</source>
        <translation>micro-batch %1 × %2</translation>
    </message>
    <message>
        <source>%1 × %2 over the %3 budget</source>
        <translation>%1 × %2 vượt ngân sách %3</translation>
    </message>
    <message>
        <source> (%1 skipped for overflow by the loss scaler)</source>
        <translation> (bộ co giãn loss bỏ qua %1 bước do tràn số)</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps with gradient checkpointing: the same effective batch (%3), measured to fit: it peaked at %4 of the budget.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy với gradient checkpointing: cùng batch hiệu dụng (%3), đã đo là vừa: đỉnh %4 trong ngân sách.</translation>
    </message>
    <message>
        <source>Try micro-batch %1 × %2 accumulation steps with gradient checkpointing: effective batch %3, the nearest above, measured to fit: it peaked at %4 of the budget.</source>
        <translation>Hãy thử micro-batch %1 × %2 bước tích lũy với gradient checkpointing: batch hiệu dụng %3, số gần nhất phía trên, đã đo là vừa: đỉnh %4 trong ngân sách.</translation>
    </message>
    <message>
        <source>%1 × %2 with gradient checkpointing runs %3 × faster than %4 × %5 without it (measured).</source>
        <translation>%1 × %2 với gradient checkpointing chạy nhanh hơn %3 lần so với %4 × %5 không dùng nó (đo được).</translation>
    </message>
    <message>
        <source>%1 × %2 fits without checkpointing and runs %3 × faster than %4 × %5 with it (measured).</source>
        <translation>%1 × %2 vừa bộ nhớ mà không cần checkpointing và chạy nhanh hơn %3 lần so với %4 × %5 có dùng nó (đo được).</translation>
    </message>
    <message>
        <source>%1 × %2 fits without checkpointing, and checkpointing lets no larger micro-batch fit (it would only add a second forward).</source>
        <translation>%1 × %2 vừa bộ nhớ mà không cần checkpointing, và checkpointing không cho micro-batch nào lớn hơn vừa (nó chỉ thêm một lượt forward thứ hai).</translation>
    </message>
    <message>
        <source>Only with gradient checkpointing does a micro-batch this large fit.</source>
        <translation>Chỉ khi dùng gradient checkpointing thì micro-batch lớn như vậy mới vừa bộ nhớ.</translation>
    </message>
    <message>
        <source>rank %1 was lost (its process ended)</source>
        <translation>rank %1 đã mất (tiến trình của nó đã kết thúc)</translation>
    </message>
    <message>
        <source>a rank was lost (its process ended)</source>
        <translation>một rank đã mất (tiến trình của nó đã kết thúc)</translation>
    </message>
    <message>
        <source>rank %1 failed and said why</source>
        <translation>rank %1 bị lỗi và đã nói lý do</translation>
    </message>
    <message>
        <source>a rank failed and said why</source>
        <translation>một rank bị lỗi và đã nói lý do</translation>
    </message>
    <message>
        <source>the other ranks did not answer within --dist-timeout</source>
        <translation>các rank khác không trả lời trong thời hạn --dist-timeout</translation>
    </message>
    <message>
        <source>the master&apos;s port is already in use</source>
        <translation>cổng của master đã bị chiếm dụng</translation>
    </message>
    <message>
        <source>the master could not be reached</source>
        <translation>không kết nối được tới master</translation>
    </message>
    <message>
        <source>the process group failed</source>
        <translation>nhóm tiến trình gặp lỗi</translation>
    </message>
    <message>
        <source>Several processes: on rank %1, %2. [%3]</source>
        <translation>Nhiều tiến trình: trên rank %1, %2. [%3]</translation>
    </message>
    <message>
        <source> Ranks started here: %1.</source>
        <translation> Các rank được khởi động tại đây: %1.</translation>
    </message>
    <message>
        <source>%1 processes: the program for ranks 1 … N−1 (accum-run) was not found%2</source>
        <translation>%1 tiến trình: không tìm thấy chương trình cho các rank 1 … N−1 (accum-run)%2</translation>
    </message>
    <message>
        <source> at %1</source>
        <translation> tại %1</translation>
    </message>
</context>
<context>
    <name>studio::EngineUse</name>
    <message>
        <source>another run is in progress (the live run).</source>
        <translation>một lần chạy khác đang diễn ra (lần chạy trực tiếp).</translation>
    </message>
    <message>
        <source>another run is in progress (an experiment of the equivalence lab).</source>
        <translation>một lần chạy khác đang diễn ra (một thí nghiệm của phòng thí nghiệm tương đương).</translation>
    </message>
    <message>
        <source>another run is in progress (the lesson&apos;s step).</source>
        <translation>một lần chạy khác đang diễn ra (bước của bài học).</translation>
    </message>
</context>
<context>
    <name>studio::Experiments</name>
    <message>
        <source>Compare styles</source>
        <translation>So sánh các kiểu</translation>
    </message>
    <message>
        <source>Run the configuration as PyTorch loop, Accelerator and Trainer</source>
        <translation>Chạy cấu hình bằng vòng lặp PyTorch, Accelerator và Trainer</translation>
    </message>
    <message>
        <source>Compare styles: the same configuration, seed and data order in the PyTorch loop, the Accelerator and the Trainer. They are three spellings of one idea, so the loss curves lie on top of each other and max |Δ loss| is at rounding level.</source>
        <translation>So sánh các kiểu: cùng cấu hình, seed và thứ tự dữ liệu trong vòng lặp PyTorch, Accelerator và Trainer. Đó là ba cách viết của cùng một ý tưởng, nên các đường loss trùng nhau và max |Δ loss| chỉ ở mức sai số làm tròn.</translation>
    </message>
    <message>
        <source>Compare accumulation</source>
        <translation>So sánh tích lũy</translation>
    </message>
    <message>
        <source>Same effective batch as (B·K, 1), (B, K) and (B/2, 2K)</source>
        <translation>Cùng batch hiệu dụng dưới dạng (B·K, 1), (B, K) và (B/2, 2K)</translation>
    </message>
    <message>
        <source>Compare accumulation: one big batch (B·K, 1), the configured (B, K) and (B/2, 2K) — the same effective batch and seed. Expect the same curve, less peak memory for smaller micro-batches, and a little less speed.</source>
        <translation>So sánh tích lũy: một batch lớn (B·K, 1), cấu hình (B, K) và (B/2, 2K) — cùng batch hiệu dụng và seed. Kỳ vọng: cùng một đường cong, micro-batch nhỏ hơn thì bộ nhớ đỉnh thấp hơn, và chậm hơn một chút.</translation>
    </message>
    <message>
        <source>no_sync vs sync each</source>
        <translation>no_sync so với đồng bộ từng bước</translation>
    </message>
    <message>
        <source>no_sync vs sync every micro-batch</source>
        <translation>no_sync so với đồng bộ mỗi micro-batch</translation>
    </message>
    <message>
        <source>Several processes: gradients averaged once per update (no_sync) or after every micro-batch</source>
        <translation>Nhiều tiến trình: gradient được lấy trung bình một lần mỗi cập nhật (no_sync) hoặc sau mỗi micro-batch</translation>
    </message>
    <message>
        <source>no_sync vs sync every micro-batch: several processes on this machine each run K micro-batches per update. Inside no_sync() (accelerator.accumulate(), the Trainer&apos;s loop) the gradients add up locally and are averaged across the processes once per update; syncing after every backward averages them K times. The losses are the same, the communication is K times as much.</source>
        <translation>no_sync so với đồng bộ mỗi micro-batch: mỗi tiến trình trên máy này chạy K micro-batch cho mỗi cập nhật. Bên trong no_sync() (accelerator.accumulate(), vòng lặp của Trainer) gradient được cộng dồn tại chỗ và lấy trung bình giữa các tiến trình một lần mỗi cập nhật; đồng bộ sau mỗi lần backward thì lấy trung bình K lần. Loss như nhau, còn lượng trao đổi gấp K lần.</translation>
    </message>
    <message>
        <source>BatchNorm</source>
        <translation>BatchNorm</translation>
    </message>
    <message>
        <source>Pitfall: BatchNorm</source>
        <translation>Cạm bẫy: BatchNorm</translation>
    </message>
    <message>
        <source>BatchNorm breaks the equivalence</source>
        <translation>BatchNorm phá vỡ sự tương đương</translation>
    </message>
    <message>
        <source>BatchNorm normalises each micro-batch with its own mean and variance, so K small batches are not one big batch: with BatchNorm the accumulated run leaves the big-batch curve.</source>
        <translation>BatchNorm chuẩn hóa mỗi micro-batch bằng trung bình và phương sai riêng của nó, nên K batch nhỏ không phải là một batch lớn: với BatchNorm, lần chạy tích lũy rời khỏi đường của batch lớn.</translation>
    </message>
    <message>
        <source>Mean vs token loss</source>
        <translation>Loss trung bình vs theo token</translation>
    </message>
    <message>
        <source>Pitfall: mean vs token loss</source>
        <translation>Cạm bẫy: loss trung bình vs theo token</translation>
    </message>
    <message>
        <source>Variable-length sequences: mean per micro-batch vs normalised by the window&apos;s tokens</source>
        <translation>Chuỗi độ dài khác nhau: trung bình từng micro-batch so với chuẩn hóa theo số token của cửa sổ</translation>
    </message>
    <message>
        <source>With sequences of different lengths, averaging each micro-batch&apos;s mean loss weights short sequences too much; dividing the summed token losses by the window&apos;s token count matches the big batch.</source>
        <translation>Với các chuỗi dài ngắn khác nhau, lấy trung bình loss của từng micro-batch làm chuỗi ngắn bị tính quá nặng; chia tổng loss các token cho số token của cả cửa sổ thì khớp với batch lớn.</translation>
    </message>
    <message>
        <source>Scheduler per micro-batch</source>
        <translation>Scheduler mỗi micro-batch</translation>
    </message>
    <message>
        <source>Pitfall: scheduler per micro-batch</source>
        <translation>Cạm bẫy: scheduler mỗi micro-batch</translation>
    </message>
    <message>
        <source>lr_scheduler.step() after every micro-batch (wrong) vs after every update (right)</source>
        <translation>lr_scheduler.step() sau mỗi micro-batch (sai) so với sau mỗi lần cập nhật (đúng)</translation>
    </message>
    <message>
        <source>Calling lr_scheduler.step() after every micro-batch runs the schedule K times too fast: the learning rate reaches zero after 1/K of the run. Step it once per update.</source>
        <translation>Gọi lr_scheduler.step() sau mỗi micro-batch làm lịch học chạy nhanh gấp K lần: tốc độ học về 0 sau 1/K lần chạy. Hãy gọi nó một lần mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>Loss scaler per micro-batch</source>
        <translation>Loss scaler mỗi micro-batch</translation>
    </message>
    <message>
        <source>Pitfall: loss scaler per micro-batch</source>
        <translation>Cạm bẫy: loss scaler mỗi micro-batch</translation>
    </message>
    <message>
        <source>scaler.unscale_() and scaler.update() after every micro-batch (wrong) vs once per window (right), on a run whose gradients overflow the scale</source>
        <translation>scaler.unscale_() và scaler.update() sau mỗi micro-batch (sai) so với một lần mỗi cửa sổ (đúng), trên một lượt chạy có gradient làm tràn số ở hệ số co giãn đó</translation>
    </message>
    <message>
        <source>The loss scaler multiplies each micro-batch&apos;s loss by S. Once per window, before clipping, unscale_() divides .grad by S; step() skips the update if a gradient is inf/NaN (✕), and update() then halves S. S starts at 3.4e38, float32&apos;s largest, and SGD runs at lr 0.1 or more, so gradient spikes above 1 overflow. Unscaling and updating after every micro-batch divides what .grad holds by S again: each update keeps about its last micro-batch&apos;s gradient.</source>
        <translation>Bộ co giãn loss nhân loss của mỗi micro-batch với S. Mỗi cửa sổ một lần, trước khi cắt gradient, unscale_() chia .grad cho S; step() bỏ qua cập nhật nếu có gradient là inf/NaN (✕), và khi đó update() giảm S một nửa. S bắt đầu ở 3.4e38, giá trị lớn nhất của float32, và SGD chạy với lr từ 0.1 trở lên, nên các gradient đột biến lớn hơn 1 bị tràn số. Unscale và update sau mỗi micro-batch lại chia những gì .grad đang giữ cho S thêm lần nữa: mỗi cập nhật chỉ còn giữ khoảng gradient của micro-batch cuối cùng.</translation>
    </message>
    <message>
        <source>Memory levers</source>
        <translation>Các đòn bẩy bộ nhớ</translation>
    </message>
    <message>
        <source>The CNN at 256 × 1 and 64 × 4, each without and with gradient checkpointing: their losses, peak memory by category, samples/s</source>
        <translation>CNN ở 256 × 1 và 64 × 4, mỗi cấu hình có và không có gradient checkpointing: loss của chúng, bộ nhớ đỉnh theo loại, mẫu/giây</translation>
    </message>
    <message>
        <source>Memory levers: the CNN at 256 × 1 and 64 × 4, each without and with gradient checkpointing. The losses agree to float rounding, which training can grow (the verdict says how far apart they end); the bars show what each lever shrinks: only the activations. Parameters, gradients and optimizer state stay the same size. Checkpointing recomputes activations in backward (the CNN&apos;s first block; its second runs in slices of the batch), so it costs some speed.</source>
        <translation>Các đòn bẩy bộ nhớ: CNN ở 256 × 1 và 64 × 4, mỗi cấu hình có và không có gradient checkpointing. Loss khớp nhau đến mức làm tròn số thực, và quá trình huấn luyện có thể khuếch đại sai khác đó (kết luận cho biết cuối cùng chúng lệch nhau bao nhiêu); các cột cho thấy mỗi đòn bẩy thu nhỏ phần nào: chỉ activation. Tham số, gradient và trạng thái optimizer giữ nguyên kích thước. Checkpointing tính lại activation trong backward (khối đầu tiên của CNN; khối thứ hai chạy theo từng phần của batch), nên chậm hơn một chút.</translation>
    </message>
    <message>
        <source>Batch vs noise scale</source>
        <translation>Batch và thang nhiễu</translation>
    </message>
    <message>
        <source>Effective batch vs the noise scale</source>
        <translation>Batch hiệu dụng so với thang nhiễu</translation>
    </message>
    <message>
        <source>Two effective batches, well below and well above the measured gradient noise scale, on the same number of samples</source>
        <translation>Hai batch hiệu dụng, nhỏ hơn hẳn và lớn hơn hẳn thang nhiễu gradient đã đo, trên cùng số mẫu</translation>
    </message>
    <message>
        <source>Batch vs noise scale: the same micro-batch accumulated over a small K and a large K, so one effective batch sits well below the gradient noise scale and one well above it, each trained on the same number of samples. The big one takes far fewer optimizer steps, but above the noise scale its extra samples buy little: per sample it learns no faster. The x axis is samples seen.</source>
        <translation>Batch và thang nhiễu: cùng một micro-batch tích lũy với K nhỏ và K lớn, nên một batch hiệu dụng nhỏ hơn hẳn thang nhiễu gradient và một batch lớn hơn hẳn, mỗi lần chạy huấn luyện trên cùng số mẫu. Batch lớn cần ít bước optimizer hơn nhiều, nhưng vượt quá thang nhiễu, các mẫu thêm mang lại rất ít: tính trên mỗi mẫu, nó không học nhanh hơn. Trục x là số mẫu đã xem.</translation>
    </message>
</context>
<context>
    <name>studio::FileActions</name>
    <message>
        <source>Save configuration</source>
        <translation>Lưu cấu hình</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Could not write %1:
%2</source>
        <translation>Không ghi được %1:
%2</translation>
    </message>
    <message>
        <source>Open configuration</source>
        <translation>Mở cấu hình</translation>
    </message>
    <message>
        <source>Could not read %1:
%2</source>
        <translation>Không đọc được %1:
%2</translation>
    </message>
    <message>
        <source>Open lesson</source>
        <translation>Mở bài học</translation>
    </message>
    <message>
        <source>Lesson (*.json)</source>
        <translation>Bài học (*.json)</translation>
    </message>
    <message>
        <source>Export loss plot</source>
        <translation>Xuất biểu đồ loss</translation>
    </message>
    <message>
        <source>Export memory plot</source>
        <translation>Xuất biểu đồ bộ nhớ</translation>
    </message>
    <message>
        <source>PNG image (*.png);;PDF (*.pdf)</source>
        <translation>Ảnh PNG (*.png);;PDF (*.pdf)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Xuất</translation>
    </message>
    <message>
        <source>Could not write %1</source>
        <translation>Không ghi được %1</translation>
    </message>
    <message>
        <source>Export data (CSV)</source>
        <translation>Xuất dữ liệu (CSV)</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Wrote %1 and %2</source>
        <translation>Đã ghi %1 và %2</translation>
    </message>
</context>
<context>
    <name>studio::LabCharts</name>
    <message>
        <source>|Δ loss|</source>
        <translation>|Δ loss|</translation>
    </message>
    <message>
        <source>below: the same, up to float rounding</source>
        <translation>bên dưới: như nhau, chỉ khác sai số làm tròn</translation>
    </message>
    <message>
        <source>loss scale</source>
        <translation>hệ số co giãn loss</translation>
    </message>
    <message>
        <source>Peak memory by category</source>
        <translation>Bộ nhớ đỉnh theo loại</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>run %1</source>
        <translation>lần chạy %1</translation>
    </message>
    <message>
        <source>update skipped (overflow)</source>
        <translation>cập nhật bị bỏ qua (tràn số)</translation>
    </message>
    <message>
        <source>samples seen</source>
        <translation>số mẫu đã xem</translation>
    </message>
    <message>
        <source>optimizer steps</source>
        <translation>bước optimizer</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>tốc độ học</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>loss</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>tham số</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>gradient</translation>
    </message>
    <message>
        <source>optimizer state</source>
        <translation>trạng thái optimizer</translation>
    </message>
    <message>
        <source>activations (peak)</source>
        <translation>activation (đỉnh)</translation>
    </message>
    <message>
        <source>optimizer step (above the activations)</source>
        <translation>bước optimizer (phần trên activation)</translation>
    </message>
    <message>
        <source>%1 × %2
+ ckpt</source>
        <translation>%1 × %2
+ ckpt</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
</context>
<context>
    <name>studio::LabPanel</name>
    <message>
        <source>Measured on two hosts: where no_sync pays</source>
        <translation>Đo trên hai máy: khi nào no_sync có lợi</translation>
    </message>
    <message>
        <source>PyTorch loop</source>
        <translation>Vòng lặp PyTorch</translation>
    </message>
    <message>
        <source>Accelerator</source>
        <translation>Accelerator</translation>
    </message>
    <message>
        <source>Trainer</source>
        <translation>Trainer</translation>
    </message>
    <message>
        <source>B=%1 × K=%2</source>
        <translation>B=%1 × K=%2</translation>
    </message>
    <message>
        <source>BatchNorm, one batch of %1</source>
        <translation>BatchNorm, một batch %1</translation>
    </message>
    <message>
        <source>BatchNorm, %1 × %2 accumulated</source>
        <translation>BatchNorm, %1 × %2 tích lũy</translation>
    </message>
    <message>
        <source>one batch of %1 (reference)</source>
        <translation>một batch %1 (tham chiếu)</translation>
    </message>
    <message>
        <source>%1 × %2, mean per micro-batch (wrong)</source>
        <translation>%1 × %2, trung bình từng micro-batch (sai)</translation>
    </message>
    <message>
        <source>%1 × %2, token-normalised (right)</source>
        <translation>%1 × %2, chuẩn hóa theo token (đúng)</translation>
    </message>
    <message>
        <source>scheduler per update (right)</source>
        <translation>scheduler mỗi lần cập nhật (đúng)</translation>
    </message>
    <message>
        <source>scheduler per micro-batch (wrong)</source>
        <translation>scheduler mỗi micro-batch (sai)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Equivalence&lt;/b&gt;</source>
        <translation>&lt;b&gt;Tương đương&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Pitfalls&lt;/b&gt;</source>
        <translation>&lt;b&gt;Cạm bẫy&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Hủy</translation>
    </message>
    <message>
        <source>Each button runs the configuration on the left in several variants, one after another, and overlays them. Runs are kept short (inside the first epoch).</source>
        <translation>Mỗi nút chạy cấu hình bên trái theo vài biến thể, lần lượt từng cái, rồi chồng các đường lên nhau. Các lần chạy được giữ ngắn (trong epoch đầu tiên).</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>Tốc độ học</translation>
    </message>
    <message>
        <source>Optimizer steps</source>
        <translation>Bước optimizer</translation>
    </message>
    <message>
        <source>Samples seen</source>
        <translation>Số mẫu đã xem</translation>
    </message>
    <message>
        <source>Plot:</source>
        <translation>Vẽ:</translation>
    </message>
    <message>
        <source>against</source>
        <translation>theo</translation>
    </message>
    <message>
        <source>scaler per window (right)</source>
        <translation>scaler mỗi cửa sổ (đúng)</translation>
    </message>
    <message>
        <source>scaler per micro-batch (wrong)</source>
        <translation>scaler mỗi micro-batch (sai)</translation>
    </message>
    <message>
        <source>Loss scale</source>
        <translation>Hệ số co giãn loss</translation>
    </message>
    <message>
        <source>%1 × %2, checkpointing</source>
        <translation>%1 × %2, checkpointing</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>no_sync</source>
        <translation>no_sync</translation>
    </message>
    <message>
        <source>sync every micro-batch</source>
        <translation>đồng bộ mỗi micro-batch</translation>
    </message>
    <message>
        <source>%1 × %2 = %3 (small)</source>
        <translation>%1 × %2 = %3 (nhỏ)</translation>
    </message>
    <message>
        <source>%1 × %2 = %3 (big)</source>
        <translation>%1 × %2 = %3 (lớn)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Which batch&lt;/b&gt;</source>
        <translation>&lt;b&gt;Batch nào&lt;/b&gt;</translation>
    </message>
</context>
<context>
    <name>studio::LabTable</name>
    <message>
        <source>%1 (S → %2)</source>
        <translation>%1 (S → %2)</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Lần chạy</translation>
    </message>
    <message>
        <source>B × K = effective</source>
        <translation>B × K = hiệu dụng</translation>
    </message>
    <message>
        <source>Final loss</source>
        <translation>Loss cuối</translation>
    </message>
    <message>
        <source>max |Δ loss| vs first</source>
        <translation>max |Δ loss| so với lần đầu</translation>
    </message>
    <message>
        <source>Final accuracy</source>
        <translation>Độ chính xác cuối</translation>
    </message>
    <message>
        <source>Time (s)</source>
        <translation>Thời gian (s)</translation>
    </message>
    <message>
        <source>Peak memory</source>
        <translation>Bộ nhớ đỉnh</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Mẫu/giây</translation>
    </message>
    <message>
        <source>All-reduces / update</source>
        <translation>All-reduce / cập nhật</translation>
    </message>
    <message>
        <source>Time / update (ms)</source>
        <translation>Thời gian / cập nhật (ms)</translation>
    </message>
    <message>
        <source>Peak activations</source>
        <translation>Activation đỉnh</translation>
    </message>
    <message>
        <source>Optimizer step</source>
        <translation>Bước optimizer</translation>
    </message>
    <message>
        <source>Skipped updates</source>
        <translation>Cập nhật bị bỏ qua</translation>
    </message>
    <message>
        <source>median of %1 updates after the first %2 (quartiles %3)</source>
        <translation>trung vị của %1 lần cập nhật sau %2 lần đầu (tứ phân vị %3)</translation>
    </message>
</context>
<context>
    <name>studio::LabVerdict</name>
    <message>
        <source>Running %1 runs one after another…</source>
        <translation>Đang chạy lần lượt %1 lần chạy…</translation>
    </message>
    <message>
        <source>Run %1 of %2: %3…</source>
        <translation>Lần chạy %1 trên %2: %3…</translation>
    </message>
    <message>
        <source>0 (bit-identical)</source>
        <translation>0 (giống hệt từng bit)</translation>
    </message>
    <message>
        <source>Run “%1” did not start: %2</source>
        <translation>Lần chạy “%1” không bắt đầu được: %2</translation>
    </message>
    <message>
        <source>Not every run completed; see the status column of the Runs tab.</source>
        <translation>Không phải lần chạy nào cũng hoàn tất; xem cột trạng thái ở thẻ Các lần chạy.</translation>
    </message>
    <message>
        <source>Largest |Δ loss| between any two styles over %1 updates: %2 — the same trajectory.</source>
        <translation>|Δ loss| lớn nhất giữa hai kiểu bất kỳ qua %1 lần cập nhật: %2 — cùng một quỹ đạo.</translation>
    </message>
    <message>
        <source>Largest |Δ loss| between styles: %1 — they differ (partial windows? dropout?).</source>
        <translation>|Δ loss| lớn nhất giữa các kiểu: %1 — chúng khác nhau (cửa sổ thiếu? dropout?).</translation>
    </message>
    <message>
        <source>Same losses: largest |Δ loss| %1.</source>
        <translation>Loss như nhau: |Δ loss| lớn nhất %1.</translation>
    </message>
    <message>
        <source>Losses apart by up to %1, above float rounding: the same sums in another order, the difference grown by training.</source>
        <translation>Loss lệch nhau tối đa %1, vượt sai số làm tròn: cùng các phép cộng theo thứ tự khác, chênh lệch được quá trình huấn luyện khuếch đại.</translation>
    </message>
    <message>
        <source>All-reduces per update: %1 with no_sync, %2 syncing every micro-batch; time per update %3 ms vs %4 ms.</source>
        <translation>All-reduce mỗi cập nhật: %1 với no_sync, %2 khi đồng bộ mỗi micro-batch; thời gian mỗi cập nhật %3 ms so với %4 ms.</translation>
    </message>
    <message>
        <source>Peak memory %1 (activations %2) · samples/s %3.</source>
        <translation>Bộ nhớ đỉnh %1 (activation %2) · mẫu/giây %3.</translation>
    </message>
    <message>
        <source>The optimizer step&apos;s temporaries (%1) are the floor: a smaller micro-batch saves no more.</source>
        <translation>Các giá trị tạm của bước optimizer (%1) là mức sàn: micro-batch nhỏ hơn không tiết kiệm thêm.</translation>
    </message>
    <message>
        <source>Once per window: %1 of %2 updates skipped for overflow (✕), S %3 → %4. Per micro-batch: %5 of %6 skipped, S → %7. Largest |Δ loss| between them: %8.</source>
        <translation>Một lần mỗi cửa sổ: %1 trên %2 cập nhật bị bỏ qua do tràn số (✕), S %3 → %4. Mỗi micro-batch: bỏ qua %5 trên %6, S → %7. |Δ loss| lớn nhất giữa hai lượt: %8.</translation>
    </message>
    <message>
        <source>Peak activations %1 · parameters, gradients and optimizer state %2 in every run · samples/s %3.</source>
        <translation>Activation đỉnh %1 · tham số, gradient và trạng thái optimizer %2 ở mọi lần chạy · mẫu/giây %3.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Largest |Δ loss| against “%1” — %2.</source>
        <translation>|Δ loss| lớn nhất so với “%1” — %2.</translation>
    </message>
    <message>
        <source>Largest |Δ loss| between the variants: %1.</source>
        <translation>|Δ loss| lớn nhất giữa các biến thể: %1.</translation>
    </message>
</context>
<context>
    <name>studio::Lesson</name>
    <message>
        <source>Run “%1” did not complete: %2.</source>
        <translation>Lần chạy “%1” không hoàn tất: %2.</translation>
    </message>
    <message>
        <source>no summary</source>
        <translation>không có bản tóm tắt</translation>
    </message>
    <message>
        <source>Nothing ran.</source>
        <translation>Không có lần chạy nào.</translation>
    </message>
    <message>
        <source>Expected out of memory, but the run ended: %1.</source>
        <translation>Lẽ ra phải hết bộ nhớ, nhưng lần chạy kết thúc: %1.</translation>
    </message>
    <message>
        <source>Out of memory at micro-batch %1 × %2 under the %3 budget.</source>
        <translation>Hết bộ nhớ ở micro-batch %1 × %2 với ngân sách %3.</translation>
    </message>
    <message>
        <source>The engine suggests %1 × %2: the same %3 samples per update.</source>
        <translation>Engine gợi ý %1 × %2: vẫn %3 mẫu cho mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>%1 micro-batches, %2 updates: the optimizer stepped once every %3 micro-batches, after their gradients had added up.</source>
        <translation>%1 micro-batch, %2 lần cập nhật: optimizer bước một lần sau mỗi %3 micro-batch, khi gradient của chúng đã cộng dồn.</translation>
    </message>
    <message>
        <source>Peak memory %1.</source>
        <translation>Bộ nhớ đỉnh %1.</translation>
    </message>
    <message>
        <source>Largest |Δ loss| between the three styles: %1 (≤ 1e-5). One idea, three spellings.</source>
        <translation>|Δ loss| lớn nhất giữa ba kiểu: %1 (≤ 1e-5). Một ý tưởng, ba cách viết.</translation>
    </message>
    <message>
        <source>Mean per micro-batch: |Δ loss| up to %1, visibly off. Normalised by the window&apos;s tokens: %2, the big batch&apos;s curve.</source>
        <translation>Trung bình từng micro-batch: |Δ loss| tới %1, lệch thấy rõ. Chuẩn hóa theo số token của cửa sổ: %2, đúng đường của batch lớn.</translation>
    </message>
    <message>
        <source>With BatchNorm, %1 accumulated leaves one batch of %2 by up to %3 in loss.</source>
        <translation>Với BatchNorm, %1 tích lũy lệch khỏi một batch %2 tới %3 về loss.</translation>
    </message>
    <message>
        <source>Stepped per micro-batch, the learning rate is 0 from update %1 of %2; stepped per update, it is still %3 at the last one.</source>
        <translation>Gọi sau mỗi micro-batch, tốc độ học bằng 0 từ lần cập nhật %1 trên %2; gọi sau mỗi lần cập nhật, nó vẫn là %3 ở lần cuối.</translation>
    </message>
    <message>
        <source>Once per window, the scaler skipped %1 of %2 updates for overflow and halved S once for each (%3 → %4). Per micro-batch, each update kept about its last micro-batch&apos;s gradient: |Δ loss| up to %5.</source>
        <translation>Một lần mỗi cửa sổ: bộ co giãn bỏ qua %1 trên %2 cập nhật do tràn số và giảm S một nửa cho mỗi lần (%3 → %4). Sau mỗi micro-batch: mỗi cập nhật chỉ giữ khoảng gradient của micro-batch cuối cùng, |Δ loss| lên tới %5.</translation>
    </message>
    <message>
        <source>Largest |Δ loss| %1. Peak activations %2 at 256 × 1, %3 at 64 × 4; with checkpointing %4 and %5. Parameters, gradients and optimizer state: %6 in all four.</source>
        <translation>|Δ loss| lớn nhất %1. Activation đỉnh %2 ở 256 × 1, %3 ở 64 × 4; với checkpointing %4 và %5. Tham số, gradient và trạng thái optimizer: %6 ở cả bốn lần chạy.</translation>
    </message>
    <message>
        <source>not the same (%1 → %2)</source>
        <translation>không như nhau (%1 → %2)</translation>
    </message>
    <message>
        <source>The engine suggests %1 × %2 with gradient checkpointing: the same %3 samples per update.</source>
        <translation>Engine gợi ý %1 × %2 với gradient checkpointing: vẫn %3 mẫu cho mỗi lần cập nhật.</translation>
    </message>
    <message>
        <source>All-reduces per update: %1 with no_sync, %2 syncing every micro-batch; time per update %3 ms vs %4 ms.</source>
        <translation>All-reduce mỗi cập nhật: %1 với no_sync, %2 khi đồng bộ mỗi micro-batch; thời gian mỗi cập nhật %3 ms so với %4 ms.</translation>
    </message>
    <message>
        <source>epoch %1: eval loss %2, accuracy %3</source>
        <translation>epoch %1: loss đánh giá %2, độ chính xác %3</translation>
    </message>
    <message>
        <source>%1 updates; the Trainer&apos;s log: %2.</source>
        <translation>%1 lần cập nhật; nhật ký của Trainer: %2.</translation>
    </message>
    <message>
        <source>no evaluation</source>
        <translation>không có lần đánh giá nào</translation>
    </message>
    <message>
        <source>en</source>
        <comment>the code of this translation&apos;s language</comment>
        <translation>vi</translation>
    </message>
</context>
<context>
    <name>studio::LessonPanel</name>
    <message>
        <source>Back</source>
        <translation>Quay lại</translation>
    </message>
    <message>
        <source>The previous step (Alt+Left)</source>
        <translation>Bước trước (Alt+Trái)</translation>
    </message>
    <message>
        <source>Run again</source>
        <translation>Chạy lại</translation>
    </message>
    <message>
        <source>Set the step&apos;s configuration again and run it</source>
        <translation>Đặt lại cấu hình của bước này và chạy</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>Tiếp</translation>
    </message>
    <message>
        <source>The next step (Alt+Right)</source>
        <translation>Bước sau (Alt+Phải)</translation>
    </message>
    <message>
        <source>Close the lesson</source>
        <translation>Đóng bài học</translation>
    </message>
    <message>
        <source>Step %1 of %2</source>
        <translation>Bước %1/%2</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>Đang chạy…</translation>
    </message>
    <message>
        <source>The step could not start: %1</source>
        <translation>Không bắt đầu được bước này: %1</translation>
    </message>
</context>
<context>
    <name>studio::LinkCurve</name>
    <message>
        <source>unshaped</source>
        <translation>không giới hạn</translation>
    </message>
    <message>
        <source>%1 × at %2</source>
        <translation>%1 × ở %2</translation>
    </message>
    <message>
        <source>Measured between two hosts, no_sync trains the CNN %1 as fast as syncing every micro-batch: the slower the network, the more the skipped all-reduces save.</source>
        <translation>Đo giữa hai máy, no_sync huấn luyện CNN nhanh gấp %1 so với đồng bộ sau mỗi micro-batch: mạng càng chậm, các all-reduce được bỏ qua càng tiết kiệm nhiều.</translation>
    </message>
    <message>
        <source>%1, accum-run</source>
        <translation>%1, accum-run</translation>
    </message>
    <message>
        <source>%1, eager DDP</source>
        <translation>%1, DDP eager</translation>
    </message>
    <message>
        <source>link between the two hosts (in brackets: its rate as measured)</source>
        <translation>đường truyền giữa hai máy (trong ngoặc: tốc độ đo được)</translation>
    </message>
    <message>
        <source>no_sync ÷ sync each (samples/s)</source>
        <translation>no_sync ÷ đồng bộ mỗi lần (mẫu/s)</translation>
    </message>
</context>
<context>
    <name>studio::LiveView</name>
    <message>
        <source>1 thread</source>
        <translation>1 luồng</translation>
    </message>
    <message>
        <source>%1 threads</source>
        <translation>%1 luồng</translation>
    </message>
    <message>
        <source>Step %1</source>
        <translation>Bước %1</translation>
    </message>
    <message>
        <source>Epoch %1</source>
        <translation>Epoch %1</translation>
    </message>
    <message>
        <source>ETA %1</source>
        <translation>Còn %1</translation>
    </message>
    <message>
        <source>took %1</source>
        <translation>mất %1</translation>
    </message>
</context>
<context>
    <name>studio::LossPlot</name>
    <message>
        <source>Training loss</source>
        <translation>Loss huấn luyện</translation>
    </message>
    <message>
        <source>micro-batch loss</source>
        <translation>loss micro-batch</translation>
    </message>
    <message>
        <source>optimizer-step (window) loss</source>
        <translation>loss bước optimizer (cửa sổ)</translation>
    </message>
    <message>
        <source>eval loss</source>
        <translation>loss đánh giá</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>loss</translation>
    </message>
    <message>
        <source>optimizer steps</source>
        <translation>bước optimizer</translation>
    </message>
    <message>
        <source>Optimizer steps</source>
        <translation>Bước optimizer</translation>
    </message>
    <message>
        <source>Samples seen</source>
        <translation>Số mẫu đã xem</translation>
    </message>
    <message>
        <source>Wall time (s)</source>
        <translation>Thời gian thực (s)</translation>
    </message>
    <message>
        <source>Exponential moving average of the optimizer-step loss</source>
        <translation>Trung bình trượt mũ của loss bước optimizer</translation>
    </message>
    <message>
        <source>Log scale</source>
        <translation>Thang log</translation>
    </message>
    <message>
        <source>wheel: zoom · drag: pan · double-click: fit</source>
        <translation>lăn chuột: phóng to · kéo: di chuyển · nhấp đúp: vừa khung</translation>
    </message>
    <message>
        <source>optimizer-step loss (EMA %1)</source>
        <translation>loss bước optimizer (EMA %1)</translation>
    </message>
    <message>
        <source>x axis</source>
        <translation>trục x</translation>
    </message>
    <message>
        <source>Smoothing:</source>
        <translation>Làm mượt:</translation>
    </message>
    <message>
        <source>loss scale S (right axis)</source>
        <translation>hệ số co giãn loss S (trục phải)</translation>
    </message>
    <message>
        <source>update skipped (inf/NaN gradients)</source>
        <translation>cập nhật bị bỏ qua (gradient inf/NaN)</translation>
    </message>
    <message>
        <source>loss scale</source>
        <translation>hệ số co giãn loss</translation>
    </message>
    <message>
        <source>samples seen</source>
        <translation>số mẫu đã xem</translation>
    </message>
    <message>
        <source>wall time (s)</source>
        <translation>thời gian thực (s)</translation>
    </message>
</context>
<context>
    <name>studio::MainWindow</name>
    <message>
        <source>Accumulate Studio — gradient accumulation, live</source>
        <translation>Accumulate Studio — tích lũy gradient, trực tiếp</translation>
    </message>
    <message>
        <source>Suggestion applied: %1 × %2. Press Run.</source>
        <translation>Đã áp dụng gợi ý: %1 × %2. Bấm Chạy.</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>Epoch</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Bước</translation>
    </message>
    <message>
        <source>Eval loss</source>
        <translation>Loss đánh giá</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>Độ chính xác</translation>
    </message>
    <message>
        <source>F1</source>
        <translation>F1</translation>
    </message>
    <message>
        <source>The run&apos;s log, as the style&apos;s Python original would print it</source>
        <translation>Nhật ký lần chạy, như bản Python gốc của kiểu này in ra</translation>
    </message>
    <message>
        <source>&lt;b&gt;Run log&lt;/b&gt;</source>
        <translation>&lt;b&gt;Nhật ký chạy&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>Sẵn sàng</translation>
    </message>
    <message>
        <source>Live run</source>
        <translation>Lần chạy trực tiếp</translation>
    </message>
    <message>
        <source>Equivalence lab</source>
        <translation>Phòng thí nghiệm tương đương</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>Các lần chạy</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>&amp;Chạy</translation>
    </message>
    <message>
        <source>Start the run (Ctrl+R)</source>
        <translation>Bắt đầu chạy (Ctrl+R)</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>&amp;Tạm dừng</translation>
    </message>
    <message>
        <source>Pause or resume at the next micro-batch (Space)</source>
        <translation>Tạm dừng hoặc tiếp tục ở micro-batch kế tiếp (Space)</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>&amp;Dừng</translation>
    </message>
    <message>
        <source>Stop at the next micro-batch (Esc)</source>
        <translation>Dừng ở micro-batch kế tiếp (Esc)</translation>
    </message>
    <message>
        <source>Step one micro-batch</source>
        <translation>Chạy một micro-batch</translation>
    </message>
    <message>
        <source>While paused: run exactly one more micro-batch (F10)</source>
        <translation>Khi tạm dừng: chạy đúng một micro-batch nữa (F10)</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Lần chạy</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Tệp</translation>
    </message>
    <message>
        <source>&amp;Open configuration…</source>
        <translation>&amp;Mở cấu hình…</translation>
    </message>
    <message>
        <source>&amp;Save configuration…</source>
        <translation>&amp;Lưu cấu hình…</translation>
    </message>
    <message>
        <source>Export loss plot (PNG/PDF)…</source>
        <translation>Xuất biểu đồ loss (PNG/PDF)…</translation>
    </message>
    <message>
        <source>Export memory plot (PNG/PDF)…</source>
        <translation>Xuất biểu đồ bộ nhớ (PNG/PDF)…</translation>
    </message>
    <message>
        <source>Export data (CSV)…</source>
        <translation>Xuất dữ liệu (CSV)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>T&amp;hoát</translation>
    </message>
    <message>
        <source>&amp;Lab</source>
        <translation>&amp;Thí nghiệm</translation>
    </message>
    <message>
        <source>Se&amp;ttings</source>
        <translation>&amp;Cài đặt</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Ngôn ngữ</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Ngôn ngữ</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Tiếp tục</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Đã tạm dừng</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>Đang chạy</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>Đang dừng…</translation>
    </message>
    <message>
        <source>%1 samples/s</source>
        <translation>%1 mẫu/giây</translation>
    </message>
    <message>
        <source> — %1 optimizer steps, final loss %2</source>
        <translation> — %1 bước optimizer, loss cuối %2</translation>
    </message>
    <message>
        <source>Show or hide the configuration panel</source>
        <translation>Hiện hoặc ẩn bảng cấu hình</translation>
    </message>
    <message>
        <source>&amp;Lesson</source>
        <translation>&amp;Bài học</translation>
    </message>
    <message>
        <source>The chapter on gradient accumulation, step by step</source>
        <translation>Chương về tích lũy gradient, từng bước một</translation>
    </message>
    <message>
        <source>&amp;Chapter lesson: a text classifier</source>
        <translation>Bài học của &amp;chương: một bộ phân loại văn bản</translation>
    </message>
    <message>
        <source>The chapter&apos;s lesson: one text classifier trained with the PyTorch loop, Accelerate and the Trainer</source>
        <translation>Bài học của chương: một bộ phân loại văn bản được huấn luyện bằng vòng lặp PyTorch, Accelerate và Trainer</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Xem</translation>
    </message>
    <message>
        <source>&amp;Presentation</source>
        <translation>&amp;Trình chiếu</translation>
    </message>
    <message>
        <source>Large text and lines, the configuration in one line, full screen (F11)</source>
        <translation>Chữ và nét vẽ lớn, cấu hình gọn trong một dòng, toàn màn hình (F11)</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>Cấu hình</translation>
    </message>
    <message>
        <source>Suggestion applied: %1 × %2 with gradient checkpointing. Press Run.</source>
        <translation>Đã áp dụng gợi ý: %1 × %2 với gradient checkpointing. Bấm Chạy.</translation>
    </message>
    <message>
        <source>Not started: %1</source>
        <translation>Không bắt đầu được: %1</translation>
    </message>
    <message>
        <source>&amp;Reset to defaults</source>
        <translation>&amp;Đặt lại mặc định</translation>
    </message>
    <message>
        <source>Set every field of the configuration to its default (Undo brings them back)</source>
        <translation>Đặt mọi trường của cấu hình về mặc định (Hoàn tác sẽ khôi phục chúng)</translation>
    </message>
    <message>
        <source>&amp;Undo reset to defaults</source>
        <translation>&amp;Hoàn tác đặt lại mặc định</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>Hoàn tác</translation>
    </message>
    <message>
        <source>Bring back the configuration from before Reset to defaults</source>
        <translation>Khôi phục cấu hình trước khi Đặt lại mặc định</translation>
    </message>
    <message>
        <source>Configuration reset to defaults.</source>
        <translation>Đã đặt lại cấu hình về mặc định.</translation>
    </message>
    <message>
        <source>Configuration restored.</source>
        <translation>Đã khôi phục cấu hình.</translation>
    </message>
    <message>
        <source>Click a problem to show its field</source>
        <translation>Bấm vào một lỗi để tới trường của nó</translation>
    </message>
    <message>
        <source>Open &amp;lesson…</source>
        <translation>Mở &amp;bài học…</translation>
    </message>
    <message>
        <source>Open lesson</source>
        <translation>Mở bài học</translation>
    </message>
    <message>
        <source>No translation for %1 in %2</source>
        <translation>Không có bản dịch %1 trong %2</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>Trợ &amp;giúp</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts…</source>
        <translation>&amp;Phím tắt…</translation>
    </message>
    <message>
        <source>Every key of the studio, read from its menus and buttons (F1)</source>
        <translation>Mọi phím tắt của studio, đọc từ các menu và nút của nó (F1)</translation>
    </message>
    <message>
        <source>the lab&apos;s run “%1”</source>
        <translation>lần chạy “%1” của phòng thí nghiệm</translation>
    </message>
    <message>
        <source>run “%1”</source>
        <translation>lần chạy “%1”</translation>
    </message>
    <message>
        <source>the live run</source>
        <translation>lần chạy trực tiếp</translation>
    </message>
    <message>
        <source>Noise scale</source>
        <translation>Thang nhiễu</translation>
    </message>
    <message>
        <source>&lt;b&gt;Evaluation per epoch&lt;/b&gt;</source>
        <translation>&lt;b&gt;Đánh giá theo epoch&lt;/b&gt;</translation>
    </message>
</context>
<context>
    <name>studio::MemoryPlot</name>
    <message>
        <source>CPU tensor memory</source>
        <translation>Bộ nhớ tensor CPU</translation>
    </message>
    <message>
        <source>peak</source>
        <translation>đỉnh</translation>
    </message>
    <message>
        <source>reserved (caching allocator)</source>
        <translation>dành sẵn (bộ cấp phát đệm)</translation>
    </message>
    <message>
        <source>budget</source>
        <translation>ngân sách</translation>
    </message>
    <message>
        <source>out of memory</source>
        <translation>hết bộ nhớ</translation>
    </message>
    <message>
        <source>wall time (s)</source>
        <translation>thời gian thực (s)</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>GPU memory (allocated by tensors)</source>
        <translation>Bộ nhớ GPU (tensor đã cấp phát)</translation>
    </message>
    <message>
        <source>GPU memory: %1 (allocated by tensors)</source>
        <translation>Bộ nhớ GPU: %1 (tensor đã cấp phát)</translation>
    </message>
    <message>
        <source>budget %1</source>
        <translation>ngân sách %1</translation>
    </message>
    <message>
        <source>current (total)</source>
        <translation>hiện tại (tổng)</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>tham số</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>gradient</translation>
    </message>
    <message>
        <source>optimizer state</source>
        <translation>trạng thái optimizer</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>activation</translation>
    </message>
    <message>
        <source>optimizer steps</source>
        <translation>bước optimizer</translation>
    </message>
    <message>
        <source>Accumulation shrinks only the activations band.</source>
        <translation>Tích lũy chỉ thu nhỏ dải activation.</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 giây</translation>
    </message>
    <message>
        <source>activations %1</source>
        <translation>activation %1</translation>
    </message>
    <message>
        <source>optimizer state %1</source>
        <translation>trạng thái optimizer %1</translation>
    </message>
    <message>
        <source>gradients %1</source>
        <translation>gradient %1</translation>
    </message>
    <message>
        <source>parameters %1</source>
        <translation>tham số %1</translation>
    </message>
    <message>
        <source>of them frozen weights %1 (no gradients, no optimizer state)</source>
        <translation>trong đó trọng số đóng băng %1 (không gradient, không trạng thái optimizer)</translation>
    </message>
    <message>
        <source>frozen weights</source>
        <translation>trọng số đóng băng</translation>
    </message>
    <message>
        <source>total %1, peak so far %2</source>
        <translation>tổng %1, đỉnh đến nay %2</translation>
    </message>
    <message>
        <source>peak since the previous record: %1</source>
        <translation>đỉnh kể từ bản ghi trước: %1</translation>
    </message>
    <message>
        <source>now: %1 (activations %2, gradients %3)</source>
        <translation>hiện tại: %1 (activation %2, gradient %3)</translation>
    </message>
    <message>
        <source>peak of the run so far: %1</source>
        <translation>đỉnh của lần chạy đến nay: %1</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>bước optimizer</translation>
    </message>
    <message>
        <source>The activations (saved for backward, the batch, temporaries) grow with the micro-batch: more accumulation steps with a smaller micro-batch shrink them. Parameters, gradients and optimizer state belong to the model and the optimizer. Gradient checkpointing shrinks the activations too, at the cost of a second forward. The optimizer step&apos;s temporaries (AdamW&apos;s are a few times the largest parameter) show on top where the step needed more than the activations: at a small micro-batch they set the peak. The bands show what the peak between two records was made of; hovering shows the figures of the moment too.</source>
        <translation>Activation (được lưu cho backward, batch, các giá trị tạm) tăng theo micro-batch: nhiều bước tích lũy hơn với micro-batch nhỏ hơn sẽ thu nhỏ chúng. Tham số, gradient và trạng thái optimizer thuộc về mô hình và optimizer. Gradient checkpointing cũng thu nhỏ activation, đổi lại một lượt forward thứ hai. Các giá trị tạm của bước optimizer (của AdamW gấp vài lần tham số lớn nhất) hiện ở trên cùng khi bước đó cần nhiều hơn activation: ở micro-batch nhỏ chúng quyết định đỉnh. Các dải cho thấy đỉnh giữa hai bản ghi gồm những gì; rê chuột lên biểu đồ để xem cả số liệu của thời điểm đó.</translation>
    </message>
    <message>
        <source>optimizer step (above the activations) %1</source>
        <translation>bước optimizer (phần trên activation) %1</translation>
    </message>
</context>
<context>
    <name>studio::NoisePlot</name>
    <message>
        <source>noise scale (running)</source>
        <translation>thang nhiễu (trung bình trượt)</translation>
    </message>
    <message>
        <source>optimizer steps</source>
        <translation>bước optimizer</translation>
    </message>
    <message>
        <source>samples</source>
        <translation>mẫu</translation>
    </message>
    <message>
        <source>The noise scale is measured from the accumulation windows: it needs K ≥ 2 or several processes.</source>
        <translation>Thang nhiễu được đo từ các cửa sổ tích lũy: cần K ≥ 2 hoặc nhiều tiến trình.</translation>
    </message>
    <message>
        <source>your effective batch (tokens)</source>
        <translation>batch hiệu dụng của bạn (token)</translation>
    </message>
    <message>
        <source>your effective batch</source>
        <translation>batch hiệu dụng của bạn</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>token</translation>
    </message>
    <message>
        <source>this run</source>
        <translation>lần chạy này</translation>
    </message>
</context>
<context>
    <name>studio::NoiseScale</name>
    <message>
        <source>Noise scale: not measured yet (it needs K ≥ 2 or several processes).</source>
        <translation>Thang nhiễu: chưa đo (cần K ≥ 2 hoặc nhiều tiến trình).</translation>
    </message>
    <message>
        <source>Noise scale ≈ %1 tokens.</source>
        <translation>Thang nhiễu ≈ %1 token.</translation>
    </message>
    <message>
        <source>Noise scale ≈ %1 samples.</source>
        <translation>Thang nhiễu ≈ %1 mẫu.</translation>
    </message>
    <message>
        <source>Noise scale ≈ %1 tokens; your effective batch %2 tokens = %3 × that.</source>
        <translation>Thang nhiễu ≈ %1 token; batch hiệu dụng của bạn %2 token = %3 × con số đó.</translation>
    </message>
    <message>
        <source>Noise scale ≈ %1 samples; your effective batch %2 = %3 × that.</source>
        <translation>Thang nhiễu ≈ %1 mẫu; batch hiệu dụng của bạn %2 = %3 × con số đó.</translation>
    </message>
    <message>
        <source>Below the noise scale a bigger effective batch still pays: doubling it nearly halves the steps to a given loss.</source>
        <translation>Dưới thang nhiễu, batch hiệu dụng lớn hơn vẫn có lợi: gấp đôi nó gần như giảm một nửa số bước để đạt một mức loss.</translation>
    </message>
    <message>
        <source>Near the noise scale steps and samples are balanced: each about twice its least.</source>
        <translation>Gần thang nhiễu, số bước và số mẫu cân bằng: mỗi thứ khoảng gấp đôi mức tối thiểu của nó.</translation>
    </message>
    <message>
        <source>Above it the extra samples buy few steps: a smaller K reaches the same loss on fewer samples.</source>
        <translation>Vượt quá nó, các mẫu thêm tiết kiệm được ít bước: K nhỏ hơn đạt cùng mức loss với ít mẫu hơn.</translation>
    </message>
    <message>
        <source>Noise scale %1 tokens (measured in %2): this effective batch is %3 × it.</source>
        <translation>Thang nhiễu %1 token (đo trong %2): batch hiệu dụng này bằng %3 × thang nhiễu.</translation>
    </message>
    <message>
        <source>Noise scale %1 samples (measured in %2): this effective batch is %3 × it.</source>
        <translation>Thang nhiễu %1 mẫu (đo trong %2): batch hiệu dụng này bằng %3 × thang nhiễu.</translation>
    </message>
    <message>
        <source>To reach a given loss: about %1 × the fewest steps and %2 × the fewest samples.</source>
        <translation>Để đạt một mức loss: khoảng %1 × số bước tối thiểu và %2 × số mẫu tối thiểu.</translation>
    </message>
    <message>
        <source>K = %1 (effective batch %2) would reach it on about %3 × the samples, in %4 × the steps.</source>
        <translation>K = %1 (batch hiệu dụng %2) sẽ đạt mức đó với khoảng %3 × số mẫu, trong %4 × số bước.</translation>
    </message>
    <message>
        <source>An estimate from McCandlish et al. (2018); the noise scale drifts as training goes on.</source>
        <translation>Ước tính theo McCandlish và cộng sự (2018); thang nhiễu thay đổi dần trong quá trình huấn luyện.</translation>
    </message>
    <message>
        <source>Nothing to compare: a run has no step records.</source>
        <translation>Không có gì để so sánh: một lần chạy không có bản ghi bước nào.</translation>
    </message>
    <message>
        <source>Both saw %1 samples: %2 per update took %3 updates, %4 per update %5 — %6 × fewer.</source>
        <translation>Cả hai đều xem %1 mẫu: %2 mẫu mỗi cập nhật cần %3 lần cập nhật, %4 mẫu mỗi cập nhật cần %5 — ít hơn %6 ×.</translation>
    </message>
    <message>
        <source>Not the same samples: %1 and %2.</source>
        <translation>Không cùng số mẫu: %1 và %2.</translation>
    </message>
    <message>
        <source>Loss over the last %1 samples: %2 (small) vs %3 (big).</source>
        <translation>Loss trên %1 mẫu cuối: %2 (nhỏ) so với %3 (lớn).</translation>
    </message>
    <message>
        <source>Noise scale measured ≈ %1 samples: the small batch is %2 × it, the big %3 ×.</source>
        <translation>Thang nhiễu đo được ≈ %1 mẫu: batch nhỏ bằng %2 × thang nhiễu, batch lớn %3 ×.</translation>
    </message>
    <message>
        <source>No noise scale measured.</source>
        <translation>Chưa đo được thang nhiễu.</translation>
    </message>
</context>
<context>
    <name>studio::OomBanner</name>
    <message>
        <source>Apply suggestion</source>
        <translation>Áp dụng gợi ý</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Bỏ qua</translation>
    </message>
    <message>
        <source>&lt;b&gt;Out of memory&lt;/b&gt; at micro-batch %1 × %2 accumulation steps.</source>
        <translation>&lt;b&gt;Hết bộ nhớ&lt;/b&gt; ở micro-batch %1 × %2 bước tích lũy.</translation>
    </message>
    <message>
        <source>&lt;br&gt;Suggestion: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; accumulation steps — the same effective batch (%3), less memory per pass.</source>
        <translation>&lt;br&gt;Gợi ý: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; bước tích lũy — cùng batch hiệu dụng (%3), ít bộ nhớ hơn mỗi lượt.</translation>
    </message>
    <message>
        <source>&lt;br&gt;Suggestion: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; accumulation steps with &lt;b&gt;gradient checkpointing&lt;/b&gt; — the same effective batch (%3), less memory per pass.</source>
        <translation>&lt;br&gt;Gợi ý: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; bước tích lũy với &lt;b&gt;gradient checkpointing&lt;/b&gt; — cùng batch hiệu dụng (%3), ít bộ nhớ hơn mỗi lượt.</translation>
    </message>
    <message>
        <source>For this lesson: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; accumulation steps with &lt;b&gt;gradient checkpointing&lt;/b&gt; — the same effective batch (%3), less memory per pass.</source>
        <translation>Cho bài học này: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; bước tích lũy với &lt;b&gt;gradient checkpointing&lt;/b&gt; — cùng batch hiệu dụng (%3), ít bộ nhớ hơn mỗi lượt.</translation>
    </message>
    <message>
        <source>For this lesson: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; accumulation steps — the same effective batch (%3), less memory per pass.</source>
        <translation>Cho bài học này: micro-batch &lt;b&gt;%1&lt;/b&gt; × &lt;b&gt;%2&lt;/b&gt; bước tích lũy — cùng batch hiệu dụng (%3), ít bộ nhớ hơn mỗi lượt.</translation>
    </message>
    <message>
        <source>at the same speed</source>
        <translation>với cùng tốc độ</translation>
    </message>
    <message>
        <source>%1 × faster</source>
        <translation>nhanh hơn %1 ×</translation>
    </message>
    <message>
        <source>Also measured to fit: %1 × %2 with gradient checkpointing, %3.</source>
        <translation>Cũng đã đo là vừa: %1 × %2 với gradient checkpointing, %3.</translation>
    </message>
    <message>
        <source>Also measured to fit: %1 × %2 without checkpointing, %3.</source>
        <translation>Cũng đã đo là vừa: %1 × %2 không checkpointing, %3.</translation>
    </message>
</context>
<context>
    <name>studio::RunDirector</name>
    <message>
        <source>run %1</source>
        <translation>lần chạy %1</translation>
    </message>
</context>
<context>
    <name>studio::RunsPanel</name>
    <message>
        <source>Accelerator</source>
        <translation>Accelerator</translation>
    </message>
    <message>
        <source>Trainer</source>
        <translation>Trainer</translation>
    </message>
    <message>
        <source>PyTorch loop</source>
        <translation>Vòng lặp PyTorch</translation>
    </message>
    <message>
        <source>Incomplete</source>
        <translation>Chưa xong</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Hoàn tất</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Đã dừng</translation>
    </message>
    <message>
        <source>Out of memory</source>
        <translation>Hết bộ nhớ</translation>
    </message>
    <message>
        <source>Diverged</source>
        <translation>Phân kỳ</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>Lỗi</translation>
    </message>
    <message>
        <source>Open run directory…</source>
        <translation>Mở thư mục lần chạy…</translation>
    </message>
    <message>
        <source>A directory written by accum-run --output-dir (accum_config.json + metrics.jsonl)</source>
        <translation>Thư mục do accum-run --output-dir ghi (accum_config.json + metrics.jsonl)</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Lần chạy</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>Nguồn</translation>
    </message>
    <message>
        <source>Style</source>
        <translation>Kiểu</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>K</source>
        <translation>K</translation>
    </message>
    <message>
        <source>Effective</source>
        <translation>Hiệu dụng</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Trạng thái</translation>
    </message>
    <message>
        <source>Final loss</source>
        <translation>Loss cuối</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>Độ chính xác</translation>
    </message>
    <message>
        <source>Peak memory</source>
        <translation>Bộ nhớ đỉnh</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>Mẫu/giây</translation>
    </message>
    <message>
        <source>samples seen</source>
        <translation>số mẫu đã xem</translation>
    </message>
    <message>
        <source>loss (window mean)</source>
        <translation>loss (trung bình cửa sổ)</translation>
    </message>
    <message>
        <source>live</source>
        <translation>trực tiếp</translation>
    </message>
    <message>
        <source>lab</source>
        <translation>thí nghiệm</translation>
    </message>
    <message>
        <source>Open run directory</source>
        <translation>Mở thư mục lần chạy</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>Xoá…</translation>
    </message>
    <message>
        <source>Delete the selected runs&apos; folders from the disk (after asking)</source>
        <translation>Xoá thư mục của các lần chạy đã chọn khỏi đĩa (có hỏi trước)</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>Thông lượng</translation>
    </message>
    <message>
        <source>What the plot shows of each ticked run, step by step</source>
        <translation>Đại lượng biểu đồ vẽ cho mỗi lần chạy được đánh dấu, theo từng bước</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Mô hình</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>Dữ liệu</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>Ngày</translation>
    </message>
    <message>
        <source>saved</source>
        <translation>đã lưu</translation>
    </message>
    <message>
        <source>Damaged</source>
        <translation>Bị hỏng</translation>
    </message>
    <message>
        <source>No summary: the run was stopped before its end (killed, or still running)</source>
        <translation>Không có bản tóm tắt: lần chạy đã dừng trước khi xong (bị tắt, hoặc vẫn đang chạy)</translation>
    </message>
    <message>
        <source>This session&apos;s runs; runs are not saved (Settings: Save runs in). Tick runs to overlay their curves.</source>
        <translation>Các lần chạy của phiên này; không lưu lần chạy nào (Cài đặt: Lưu các lần chạy vào). Đánh dấu để chồng các đường lên nhau.</translation>
    </message>
    <message>
        <source>This session&apos;s runs and those saved in %1. Tick runs to overlay their curves.</source>
        <translation>Các lần chạy của phiên này và các lần đã lưu trong %1. Đánh dấu để chồng các đường lên nhau.</translation>
    </message>
    <message>
        <source>%1 has no folder: nothing to delete</source>
        <translation>%1 không có thư mục: không có gì để xoá</translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>và %n lần khác</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Delete %n run(s)? Their folders are removed from the disk:</source>
        <translation>
            <numerusform>Xoá %n lần chạy? Thư mục của chúng sẽ bị xoá khỏi đĩa:</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>Xoá lần chạy</translation>
    </message>
    <message>
        <source>peak memory (MiB)</source>
        <translation>bộ nhớ đỉnh (MiB)</translation>
    </message>
    <message>
        <source>throughput (samples/s)</source>
        <translation>thông lượng (mẫu/giây)</translation>
    </message>
    <message>
        <source>Noise scale</source>
        <translation>Thang nhiễu</translation>
    </message>
</context>
<context>
    <name>studio::Shortcuts</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Phím tắt</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Phím</translation>
    </message>
    <message>
        <source>What it does</source>
        <translation>Tác dụng</translation>
    </message>
    <message>
        <source>Read from the window&apos;s menus and buttons as they are now.</source>
        <translation>Đọc từ các menu và nút của cửa sổ như hiện tại.</translation>
    </message>
</context>
</TS>
